import { dateParam } from '../../src/api/query-params';
import { instant } from '../../src/admin/admin-inputs';
import { positiveIntegerPattern } from '../../src/http/integer-params';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * The OpenAPI document as strict as the server. For every integer and date parameter of every documented operation,
 * read from the served document, boundary values and other spellings go over HTTP: the server takes exactly those
 * the declared schema admits (2xx, or 404 for an id or a page that does not exist) and refuses every other with a 400
 * that names the parameter. A generated client or a fuzzer reading the document then sends nothing the server
 * refuses, and the document refuses nothing the server takes.
 */

interface ParameterSchema {
  type: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  example?: unknown;
}
interface Parameter {
  in: 'query' | 'path';
  name: string;
  required: boolean;
  schema: ParameterSchema;
}
interface DocumentedParameter extends Parameter {
  method: string;
  path: string;
  /** The operation's other parameters. */
  others: Parameter[];
}

type Kind = 'integer' | 'day' | 'instant';

let app: TestApp;
let parameters: DocumentedParameter[];

beforeAll(async () => {
  app = await startTestApp();
  const document = (await (await fetch(`${app.baseUrl}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
  };
  parameters = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) =>
      (operation.parameters ?? []).map((parameter) => ({
        ...parameter,
        method,
        path,
        others: (operation.parameters ?? []).filter((other) => other !== parameter),
      })),
    ),
  );
});

afterAll(async () => {
  await app?.close();
});

/** What kind of value a parameter is, by its schema: an integer, a MM-DD-YYYY day, an ISO 8601 instant, or other. */
function kindOf({ schema }: Parameter): Kind | undefined {
  if (schema.type === 'integer') return 'integer';
  if (typeof schema.example === 'string' && /^\d{2}-\d{2}-\d{4}$/.test(schema.example)) return 'day';
  if (typeof schema.example === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(schema.example)) return 'instant';
  return undefined;
}

const ofKind = (kind: Kind) => parameters.filter((parameter) => kindOf(parameter) === kind);

/** Integer spellings around the declared bounds, and other spellings of numbers. */
function integerProbes({ minimum, maximum }: ParameterSchema): string[] {
  const [low, high] = [BigInt(minimum!), BigInt(maximum!)];
  return [
    ...[low - 1n, low, low + 1n, high - 1n, high, high + 1n, high * 10n].map(String),
    `0${low}`,
    `0${high}`,
    `00`,
    `+${low}`,
    `-${low}`,
    `${low}.0`,
    `${low}e0`,
    ` ${low}`,
    `${low} `,
    '9'.repeat(20),
    '\u0663', // ARABIC-INDIC DIGIT THREE
    '0x1',
    'abc',
  ];
}

const DAY_PROBES = [
  '01-01-1000',
  '12-31-9999',
  '12-31-0999',
  '01-01-10000',
  '00-00-0000',
  '00-01-2025',
  '01-00-2025',
  '13-01-2025',
  '12-32-2025',
  '01-31-2025',
  '04-30-2025',
  '04-31-2025',
  '06-31-2025',
  '02-28-2025',
  '02-29-2025',
  '02-29-2024',
  '02-29-2000',
  '02-29-1900',
  '02-30-2024',
  '1-01-2025',
  '01-01-25',
  '2025-01-01',
  '01/01/2025',
  '\u0660\u0661-\u0660\u0661-\u0662\u0660\u0662\u0665', // the same day in Arabic-Indic digits
  ' 01-01-2025',
];

const INSTANT_PROBES = [
  '2000-01-01T00:00Z',
  '2000-01-01T00:00+23:59',
  '1999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59.999-23:59',
  '2025-07-15T10:00:00.5+02:00',
  '2025-07-15T10:00:00.1234Z',
  '2025-07-15T24:00Z',
  '2025-07-15T23:60Z',
  '2025-07-15T10:00:60Z',
  '2025-07-15T10:00+24:00',
  '2025-07-15T10:00+14:60',
  '2025-07-15T10:00+99:99',
  '2024-02-29T10:00Z',
  '2025-02-29T10:00Z',
  '2100-02-29T10:00Z',
  '2000-02-29T10:00Z',
  '2025-04-31T10:00Z',
  '2025-13-01T00:00Z',
  '2025-00-10T00:00Z',
  '2025-07-15T10:00',
  '2025-07-15 10:00Z',
  '2025-07-15t10:00z',
];

/** Whether the declared schema admits the value: its pattern, and for an integer its bounds too. */
function admits(kind: Kind, schema: ParameterSchema, value: string): boolean {
  if (!new RegExp(schema.pattern!).test(value)) return false;
  return kind !== 'integer' || (BigInt(value) >= BigInt(schema.minimum!) && BigInt(value) <= BigInt(schema.maximum!));
}

/** A value the other required parameters take whatever the probed one is: both ends of a range as wide as it goes. */
function widestValue(parameter: Parameter): string {
  const kind = kindOf(parameter);
  if (kind === 'integer') return String(parameter.schema.minimum);
  if (kind === 'day') return parameter.name.endsWith('From') ? '01-01-1000' : '12-31-9999';
  if (typeof parameter.schema.example === 'string') return parameter.schema.example;
  throw new Error(`no value for the required parameter ${parameter.name}`);
}

function urlWith(parameter: DocumentedParameter, value: string): string {
  const query = new URLSearchParams();
  let path = parameter.path;
  for (const [{ in: where, name }, given] of [
    ...parameter.others.filter((other) => other.required).map((other) => [other, widestValue(other)] as const),
    [parameter, value] as const,
  ]) {
    if (where === 'path') path = path.replace(`{${name}}`, encodeURIComponent(given));
    else query.set(name, given);
  }
  return query.size > 0 ? `${path}?${query.toString()}` : path;
}

/** Each probe as the server answered it, beside what the document admits. */
async function answers(kind: Kind, probes: (schema: ParameterSchema) => string[]) {
  const found = ofKind(kind);
  expect(found.length).toBeGreaterThan(0);
  const rows = [];
  for (const parameter of found) {
    // An empty path segment is another route, not this parameter's value.
    const values = probes(parameter.schema).filter((value) => parameter.in === 'query' || value.trim() !== '');
    // One parameter's probes at once: their answers do not depend on each other.
    const sent = await Promise.all(
      values.map(async (value) => {
        const response = await app.send(parameter.method.toUpperCase(), urlWith(parameter, value));
        const body = (await response.json()) as { error?: unknown; code?: string; problems?: Array<{ in: string; name: string }> };
        return {
          where: `${parameter.method} ${parameter.path}`,
          parameter: `${parameter.in} ${parameter.name}`,
          value,
          admitted: admits(kind, parameter.schema, value),
          status: response.status,
          body,
        };
      }),
    );
    rows.push(...sent);
  }
  return rows;
}

/** Taken (a 2xx, or a 404 for what does not exist) when admitted, else a 400 with a JSON error naming the parameter. */
function expectServerTakesExactlyWhatTheDocumentAdmits(rows: Awaited<ReturnType<typeof answers>>) {
  const refusal = (parameter: string) => ({ error: 'string', code: 'invalid_parameter', problems: [parameter] });
  expect(
    rows.map(({ where, parameter, value, status, body }) => ({
      where,
      parameter,
      value,
      taken: (status >= 200 && status < 300) || status === 404,
      refusal:
        status === 400
          ? { error: typeof body.error, code: body.code, problems: body.problems?.map((problem) => `${problem.in} ${problem.name}`) }
          : undefined,
    })),
  ).toEqual(rows.map(({ where, parameter, value, admitted }) => ({ where, parameter, value, taken: admitted, refusal: admitted ? undefined : refusal(parameter) })));
}

describe('the server takes exactly what the document admits', () => {
  test('every integer parameter declares its bounds and the pattern of its spellings', () => {
    const integers = ofKind('integer');
    expect([...new Set(integers.map(({ name }) => name))].sort()).toEqual(['contactId', 'id', 'page', 'page_size']);
    for (const { path, name, schema } of integers) {
      expect([path, name, schema.minimum, typeof schema.maximum, schema.pattern]).toEqual([path, name, 1, 'number', positiveIntegerPattern(schema.maximum!)]);
    }
  });

  test('integer parameters: bounds, one past them, leading zeros, signs and other spellings', async () => {
    expectServerTakesExactlyWhatTheDocumentAdmits(await answers('integer', integerProbes));
  });

  test('MM-DD-YYYY days: impossible months and days, leap days, other formats', async () => {
    expect([...new Set(ofKind('day').map(({ name }) => name))].sort()).toEqual(['dateFrom', 'dateTo', 'updatedSince']);
    expectServerTakesExactlyWhatTheDocumentAdmits(await answers('day', () => DAY_PROBES));
  });

  test('ISO 8601 instants: impossible days and times, offsets beyond a day, other spellings', async () => {
    expect([...new Set(ofKind('instant').map(({ name }) => name))].sort()).toEqual(['created_from', 'created_to']);
    expectServerTakesExactlyWhatTheDocumentAdmits(await answers('instant', () => INSTANT_PROBES));
  });
});

describe('the patterns, swept beyond the boundary values', () => {
  const pad = (value: number, width: number) => String(value).padStart(width, '0');
  // Which days a month has depends on the year only in February: a common and a leap year, and the range's ends.
  const YEARS = [999, 1000, 1999, 2000, 2023, 2024, 2100, 9999];
  /** Years whose February 29 is checked: every century, and every year of four centuries around 2000 and the ends. */
  const leapCandidates = (from: number) => {
    const years = new Set<number>();
    for (let year = from; year <= 9999; year += 100) years.add(year);
    for (const [first, last] of [[from, from + 99], [1800, 2200], [9900, 9999]]) for (let year = first; year <= last; year++) years.add(year);
    return [...years];
  };

  test('days: the document’s pattern admits exactly the days the server’s rule takes', () => {
    const pattern = new RegExp(ofKind('day')[0].schema.pattern!);
    const rule = dateParam('day');
    const disagreements: string[] = [];
    const check = (value: string) => {
      if (pattern.test(value) !== rule.safeParse(value).success) disagreements.push(value);
    };
    for (const year of YEARS) for (let month = 0; month <= 13; month++) for (let day = 0; day <= 32; day++) check(`${pad(month, 2)}-${pad(day, 2)}-${pad(year, 4)}`);
    for (const year of leapCandidates(1000)) check(`02-29-${year}`);
    expect(disagreements).toEqual([]);
  });

  test('instants: the document’s pattern admits exactly the instants the server’s rule takes', () => {
    const pattern = new RegExp(ofKind('instant')[0].schema.pattern!);
    const rule = instant({ name: 'at', meaning: 'At' });
    const disagreements: string[] = [];
    const check = (value: string) => {
      if (pattern.test(value) !== rule.safeParse(value).success) disagreements.push(value);
    };
    for (const year of YEARS) for (let month = 0; month <= 13; month++) for (let day = 0; day <= 32; day++) check(`${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T12:00Z`);
    for (const year of leapCandidates(2000)) check(`${year}-02-29T00:00Z`);
    for (let hour = 0; hour <= 25; hour++) {
      for (const minute of [0, 59, 60]) {
        for (const second of ['', ':00', ':59', ':60', ':59.9', ':59.999', ':59.9999']) {
          for (const offset of ['Z', '+00:00', '-23:59', '+24:00', '+12:60', 'z', '']) check(`2025-07-15T${pad(hour, 2)}:${pad(minute, 2)}${second}${offset}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
  });

  test('integers: the pattern of 1 to max admits exactly those numbers, in plain decimal', () => {
    for (const max of [1, 9, 10, 99, 100, 1000, 65_535, 2_147_483_647, Number.MAX_SAFE_INTEGER]) {
      const pattern = new RegExp(positiveIntegerPattern(max));
      const top = BigInt(max);
      const probes = new Set<bigint>([0n, 1n, 2n, top - 1n, top, top + 1n, top * 10n]);
      for (let power = 1n; power <= top * 100n; power *= 10n) for (const near of [power - 1n, power, power + 1n]) probes.add(near);
      // Every number that agrees with max up to one digit and differs there, with the rest all 0 or all 9.
      const digits = String(max);
      for (let index = 0; index < digits.length; index++) {
        for (let digit = 0; digit <= 9; digit++) {
          for (const fill of ['0', '9']) probes.add(BigInt(digits.slice(0, index) + String(digit) + fill.repeat(digits.length - index - 1)));
        }
      }
      const disagreements = [...probes].filter((value) => value >= 0n && pattern.test(String(value)) !== (value >= 1n && value <= top));
      expect([max, disagreements]).toEqual([max, []]);
      expect([max, ['01', '+1', '-1', '1.0', ' 1', ''].filter((spelling) => pattern.test(spelling))]).toEqual([max, []]);
    }
  });
});
