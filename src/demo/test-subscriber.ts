import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type SignatureCheck, verifySignature } from '../webhooks/signature';
import { type ReceivedRequest, type Reply, startSubscriber } from './subscriber-server';
import {
  answerFor,
  applyModeChange,
  DEFAULT_MODE_SETTINGS,
  describeSettings,
  type ModeAnswer,
  type ModeChange,
  modeChangeInput,
  type ModeSettings,
  parseModeCommand,
  SUBSCRIBER_MODES,
} from './subscriber-modes';

/**
 * A local webhook subscriber for the demo (`npm run subscriber`): it prints one line per delivery, verifies Standard
 * Webhooks signatures when it knows the secret, and answers as its mode says, so that failed attempts, retries and
 * duplicates show up in the admin page and the Temporal UI. Loopback only.
 */

export const CONTROL_PATH = '/_control';
/** Where `npm run subscriber` listens unless told otherwise, and where `demo:traffic` points the endpoint. */
const DEFAULT_PORT = 4000;
export const DEFAULT_SUBSCRIBER_URL = `http://127.0.0.1:${DEFAULT_PORT}/webhooks`;

export interface TestSubscriberOptions {
  /** Default: any free port. */
  port?: number;
  settings?: Partial<ModeSettings>;
  /** The endpoint's signing secret; without it signatures are not checked. */
  secret?: string;
  print?: (line: string) => void;
  nowMs?: () => number;
}

export interface TestSubscriber {
  /** Where the service should deliver. */
  url: string;
  controlUrl: string;
  port: number;
  settings(): ModeSettings;
  /** Switches mode; `refuse` stops listening at once and comes back in the previous mode after its time. */
  change(change: ModeChange): Promise<ModeSettings>;
  close(): Promise<void>;
}

interface SeenEvent {
  deliveries: number;
  /** Answered 2xx before: a later delivery of this id is a duplicate the consumer must recognise. */
  acknowledged: boolean;
}

const clockTime = (ms: number) => new Date(ms).toTimeString().slice(0, 8);

function envelopeOf(request: ReceivedRequest): { id: string; event: string } {
  try {
    const body = JSON.parse(request.body.toString('utf8')) as { id?: number | string; event?: string };
    return { id: String(body.id ?? request.headers['webhook-id'] ?? '?'), event: body.event ?? '?' };
  } catch {
    return { id: String(request.headers['webhook-id'] ?? '?'), event: '(not JSON)' };
  }
}

const json = (status: number, body: unknown): Reply => ({
  status,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

/** The Standard Webhooks signature of a delivery, checked when the endpoint's secret is known. */
function signatureOf(request: ReceivedRequest, secret: string | undefined, nowMs: number): SignatureCheck | undefined {
  if (secret === undefined) return undefined;
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(' ') : value;
  };
  return verifySignature(
    { id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature') },
    request.body.toString('utf8'),
    secret,
    Math.floor(nowMs / 1000),
  );
}

interface DeliveryLine {
  atMs: number;
  id: string;
  event: string;
  deliveries: number;
  duplicate: boolean;
  answer: ModeAnswer;
  signature: SignatureCheck | undefined;
}

/** The line printed for a delivery: when, which event, how often seen, and the answer. */
function deliveryLine(line: DeliveryLine): string {
  return [
    clockTime(line.atMs),
    `#${line.id}`.padEnd(8),
    line.event.padEnd(29),
    `seen ${line.deliveries}x`,
    line.duplicate ? 'DUPLICATE' : '',
    `-> ${line.answer.status}${line.answer.delayMs ? ` after ${line.answer.delayMs / 1000} s` : ''}`,
    line.signature ? `signature ${line.signature}` : '',
  ]
    .filter(Boolean)
    .join('  ');
}

/** The mode change a control request asks for, or the answer to a request that asks for none. */
function requestedChange(request: ReceivedRequest): { change: ModeChange } | { refused: Reply } {
  if (request.method !== 'POST') return { refused: json(405, { error: 'use GET or POST' }) };
  let body: unknown;
  try {
    body = JSON.parse(request.body.toString('utf8'));
  } catch {
    return { refused: json(400, { error: 'body must be JSON such as {"mode": "flaky", "failures": 2}' }) };
  }
  const parsed = modeChangeInput.safeParse(body);
  if (!parsed.success) {
    return { refused: json(400, { error: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') }) };
  }
  return { change: parsed.data };
}

export async function startTestSubscriber(options: TestSubscriberOptions = {}): Promise<TestSubscriber> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const nowMs = options.nowMs ?? Date.now;
  let settings: ModeSettings = { ...DEFAULT_MODE_SETTINGS, ...options.settings };
  /** The mode to come back in after refusing connections. */
  let resumeMode: ModeSettings['mode'] = 'ok';
  let recovery: NodeJS.Timeout | undefined;
  const seen = new Map<string, SeenEvent>();

  const presentState = () => ({
    mode: settings.mode,
    failures: settings.failures,
    delay_seconds: settings.delaySeconds,
    refuse_seconds: settings.refuseSeconds,
    events_seen: seen.size,
  });

  function deliveryReply(request: ReceivedRequest): Reply {
    const envelope = envelopeOf(request);
    const entry = seen.get(envelope.id) ?? { deliveries: 0, acknowledged: false };
    seen.set(envelope.id, entry);
    entry.deliveries += 1;
    const duplicate = entry.acknowledged;
    const signature = signatureOf(request, options.secret, nowMs());
    const answer =
      signature === undefined || signature === 'valid'
        ? answerFor(settings, entry.deliveries)
        : { status: 401, body: `test subscriber: signature ${signature}` };
    if (answer.status >= 200 && answer.status < 300) entry.acknowledged = true;
    print(deliveryLine({ atMs: nowMs(), ...envelope, deliveries: entry.deliveries, duplicate, answer, signature }));
    return answer;
  }

  async function refuseFor(seconds: number): Promise<void> {
    await server.refuseConnections();
    print(`${clockTime(nowMs())}  refusing connections for ${seconds} s`);
    recovery = setTimeout(() => {
      change({ mode: resumeMode }).catch((err: Error) => print(`cannot listen again on port ${server.port}: ${err.message}`));
    }, seconds * 1000);
  }

  /** Takes the new settings at once; what the listener must do about it is left to the caller. */
  function switchMode(requested: ModeChange): { startRefusing: boolean; stopRefusing: boolean } {
    const before = settings;
    settings = applyModeChange(settings, requested);
    if (before.mode === 'refuse') clearTimeout(recovery);
    else resumeMode = before.mode;
    print(`${clockTime(nowMs())}  mode: ${describeSettings(settings)}`);
    return {
      startRefusing: settings.mode === 'refuse' && before.mode !== 'refuse',
      stopRefusing: before.mode === 'refuse' && settings.mode !== 'refuse',
    };
  }

  async function change(requested: ModeChange): Promise<ModeSettings> {
    const { startRefusing, stopRefusing } = switchMode(requested);
    if (stopRefusing) await server.acceptConnections();
    if (startRefusing) await refuseFor(settings.refuseSeconds);
    return settings;
  }

  function controlReply(request: ReceivedRequest): Reply {
    if (request.method === 'GET') return json(200, presentState());
    const requested = requestedChange(request);
    if ('refused' in requested) return requested.refused;
    // The control endpoint is unreachable while refusing, so a change from here can only start refusing, and the
    // listener closes only once this answer is out.
    const { startRefusing } = switchMode(requested.change);
    const reply = json(200, presentState());
    return startRefusing ? { ...reply, afterAnswer: () => void refuseFor(settings.refuseSeconds) } : reply;
  }

  const server = await startSubscriber({
    port: options.port,
    reply(request) {
      if (request.path.split('?')[0].replace(/\/$/, '') === CONTROL_PATH) return controlReply(request);
      if (request.method !== 'POST') return json(405, { error: 'webhooks are POSTed' });
      return deliveryReply(request);
    },
  });
  if (settings.mode === 'refuse') await refuseFor(settings.refuseSeconds);

  return {
    url: server.url,
    controlUrl: `http://127.0.0.1:${server.port}${CONTROL_PATH}`,
    port: server.port,
    settings: () => settings,
    change,
    async close() {
      clearTimeout(recovery);
      await server.close();
    },
  };
}

const cliOptions = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(DEFAULT_PORT),
  mode: z.enum(SUBSCRIBER_MODES).default('ok'),
  failures: z.coerce.number().int().min(0).max(100).optional(),
  delay: z.coerce.number().min(0).max(600).optional(),
  'refuse-for': z.coerce.number().min(0).max(3600).optional(),
  secret: z.string().min(1).optional(),
});

const USAGE = `Usage: npm run subscriber -- [--port 4000] [--mode ok|fail|flaky|slow|refuse|redirect]
       [--failures 2] [--delay 35] [--refuse-for 60] [--secret whsec_...]

  ok        answers 200
  fail      answers 500
  flaky     fails the first --failures attempts of each event, then 200
  slow      answers 200 after --delay seconds (the service gives up after 30)
  refuse    refuses connections for --refuse-for seconds, then comes back in the previous mode
  redirect  answers 302 (redirects are not followed: a failure)`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      mode: { type: 'string' },
      failures: { type: 'string' },
      delay: { type: 'string' },
      'refuse-for': { type: 'string' },
      secret: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const parsed = cliOptions.safeParse(values);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`);
    process.stderr.write(`${problems.join('\n')}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const flags = parsed.data;
  const subscriber = await startTestSubscriber({
    port: flags.port,
    secret: flags.secret,
    settings: {
      mode: flags.mode,
      ...(flags.failures !== undefined && { failures: flags.failures }),
      ...(flags.delay !== undefined && { delaySeconds: flags.delay }),
      ...(flags['refuse-for'] !== undefined && { refuseSeconds: flags['refuse-for'] }),
    },
  });
  process.stdout.write(
    [
      `Test subscriber on ${subscriber.url}`,
      `Mode: ${describeSettings(subscriber.settings())}${flags.secret ? '; checking signatures' : ''}`,
      `Switch mode: type ok, fail, flaky 3, slow 35, refuse 60 or redirect here, or`,
      `  curl -X POST ${subscriber.controlUrl} -H 'Content-Type: application/json' -d '{"mode":"fail"}'`,
      `Deliver here: npm run demo:traffic -- --configure-endpoint${subscriber.url === DEFAULT_SUBSCRIBER_URL ? '' : ` --subscriber-url ${subscriber.url}`}${flags.secret ? ' --signing-secret <the same secret>' : ''}`,
      '',
    ].join('\n'),
  );
  const input = readline.createInterface({ input: process.stdin });
  input.on('line', (line) => {
    if (!line.trim()) return;
    const command = parseModeCommand(line);
    if ('problem' in command) process.stdout.write(`${command.problem}\n`);
    else void subscriber.change(command.change);
  });
  process.once('SIGINT', () => {
    input.close();
    void subscriber.close().then(() => process.exit(0));
  });
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}
