import { portIsFree } from '../src/shared/free-port';

/**
 * Where each process of the stack listens: every port on 127.0.0.1, laid out from one base port so that a second
 * stack (or a test) needs only another base.
 */

export interface TemporalServicePorts {
  grpc: number;
  /** Ringpop's port, through which the services find each other (stored in Temporal's database). */
  membership: number;
  /** Prometheus `/metrics` of the service. */
  metrics: number;
  /** The frontend's HTTP API (the others have none). */
  http?: number;
}

export interface PortPlan {
  /** Caddy: the API replicas behind one port (Compose publishes it as API_PUBLISHED_PORT). */
  balancer: number;
  postgres: number;
  /** The Temporal UI through its guard (Compose publishes it as TEMPORAL_UI_PUBLISHED_PORT). */
  ui: number;
  /** The Temporal UI server itself, behind the guard. */
  uiServer: number;
  /** The OpenID Provider the UI signs operators in with. */
  oidc: number;
  frontend: TemporalServicePorts;
  /** One entry per history process. */
  history: TemporalServicePorts[];
  matching: TemporalServicePorts;
  worker: TemporalServicePorts;
  /** PORT of each API replica. */
  api: number[];
  /** METRICS_PORT of each delivery replica. */
  delivery: number[];
  jaeger: JaegerPorts;
  prometheus: number;
  alertmanager: number;
  /**
   * Where Alertmanager sends its notifications: the receiver of whoever watches the alerts (the alert drill, the
   * stack test), not a process of the stack.
   */
  alertReceiver: number;
}

export interface JaegerPorts {
  /** The OTLP receivers (Compose: 4317, 4318). */
  otlpGrpc: number;
  otlpHttp: number;
  /** The UI and the query API (Compose: 16686, published as JAEGER_UI_PUBLISHED_PORT). */
  query: number;
  queryGrpc: number;
  /** Jaeger's own /metrics (Compose: 8888). */
  metrics: number;
}

/**
 * Temporal's SQL schema stores a service's membership port as SMALLINT (`cluster_membership.rpc_port`): a port above
 * 32767 fails the service at start with `value "47012" is out of range for type smallint`.
 */
export const MAX_MEMBERSHIP_PORT = 32_767;

export const MAX_REPLICAS = 20;
export const MAX_HISTORY_PROCESSES = 4;

export interface PortLayout {
  basePort: number;
  /** Where the membership ports start; default: the base port + 12, or 20000 below that where it is too high. */
  membershipBasePort?: number;
  api: number;
  delivery: number;
  history: number;
}

/** The membership ports' default place in the block: offsets 12–18, which nothing else of the block takes. */
const MEMBERSHIP_OFFSET = 12;

/**
 * Offsets from the base: 0 balancer, 1 Postgres, 2–3 frontend gRPC and HTTP, 4 Temporal UI, 5–10 matching, worker and history
 * gRPC, 11 the OpenID Provider, 19 the Temporal UI server behind its guard, 20–26 the Temporal services' metrics, 30–49 API replicas, 50–69 delivery metrics,
 * 70–74 Jaeger (OTLP gRPC and HTTP, UI, query gRPC, metrics), 75 Prometheus, 76 Alertmanager, 77 the alert receiver;
 * membership ports at their
 * own base + 0–6, in the same order (by default base + 12–18, or 20000 below that).
 */
export function planPorts({ basePort, membershipBasePort, api, delivery, history }: PortLayout): PortPlan {
  if (api < 1 || api > MAX_REPLICAS || delivery < 1 || delivery > MAX_REPLICAS) {
    throw new Error(`--api and --delivery: 1 to ${MAX_REPLICAS} replicas each`);
  }
  if (history < 1 || history > MAX_HISTORY_PROCESSES) throw new Error(`--history: 1 to ${MAX_HISTORY_PROCESSES} processes`);
  const ownBlock = basePort + MEMBERSHIP_OFFSET;
  const memberBase = membershipBasePort ?? (ownBlock + 10 <= MAX_MEMBERSHIP_PORT ? ownBlock : ownBlock - 20_000);
  if (memberBase < 1024 || memberBase + 10 > MAX_MEMBERSHIP_PORT) {
    throw new Error(
      `membership ports ${memberBase}–${memberBase + 9}: Temporal stores them as SMALLINT, so they must lie between ` +
        `1024 and ${MAX_MEMBERSHIP_PORT}; pass --membership-base-port`,
    );
  }
  if (basePort < 1024 || basePort + 80 > 65_535) throw new Error(`--base-port ${basePort}: between 1024 and 65455`);
  const at = (offset: number) => basePort + offset;
  // Services in a fixed order, so that a port never moves when another count changes.
  const service = (index: number, http?: number): TemporalServicePorts => ({
    grpc: at(4 + index),
    membership: memberBase + index,
    metrics: at(20 + index),
    ...(http === undefined ? {} : { http }),
  });
  return {
    balancer: at(0),
    postgres: at(1),
    ui: at(4),
    oidc: at(11),
    uiServer: at(19),
    frontend: { grpc: at(2), http: at(3), membership: memberBase, metrics: at(20) },
    matching: service(1),
    worker: service(2),
    history: Array.from({ length: history }, (_, index) => service(3 + index)),
    api: Array.from({ length: api }, (_, index) => at(30 + index)),
    delivery: Array.from({ length: delivery }, (_, index) => at(50 + index)),
    jaeger: { otlpGrpc: at(70), otlpHttp: at(71), query: at(72), queryGrpc: at(73), metrics: at(74) },
    prometheus: at(75),
    alertmanager: at(76),
    alertReceiver: at(77),
  };
}

/** Every port of the plan with what listens there, for a check that none is taken before anything starts. */
export function namedPorts(plan: PortPlan): Array<{ name: string; port: number }> {
  const temporal: Array<[string, TemporalServicePorts]> = [
    ['temporal-frontend', plan.frontend],
    ['temporal-matching', plan.matching],
    ['temporal-worker', plan.worker],
    ...plan.history.map((own, index): [string, TemporalServicePorts] => [`temporal-history-${index + 1}`, own]),
  ];
  return [
    { name: 'proxy', port: plan.balancer },
    { name: 'postgres', port: plan.postgres },
    { name: 'temporal-ui-guard', port: plan.ui },
    { name: 'temporal-ui', port: plan.uiServer },
    { name: 'oidc-provider', port: plan.oidc },
    ...temporal.flatMap(([name, { grpc, membership, metrics, http }]) => [
      { name: `${name} gRPC`, port: grpc },
      { name: `${name} membership`, port: membership },
      { name: `${name} metrics`, port: metrics },
      ...(http ? [{ name: `${name} HTTP`, port: http }] : []),
    ]),
    ...plan.api.map((port, index) => ({ name: `api-${index + 1}`, port })),
    ...plan.delivery.map((port, index) => ({ name: `delivery-${index + 1} metrics`, port })),
    { name: 'jaeger OTLP gRPC', port: plan.jaeger.otlpGrpc },
    { name: 'jaeger OTLP HTTP', port: plan.jaeger.otlpHttp },
    { name: 'jaeger UI', port: plan.jaeger.query },
    { name: 'jaeger query gRPC', port: plan.jaeger.queryGrpc },
    { name: 'jaeger metrics', port: plan.jaeger.metrics },
    { name: 'prometheus', port: plan.prometheus },
    { name: 'alertmanager', port: plan.alertmanager },
  ];
}

export const allPorts = (plan: PortPlan): number[] => namedPorts(plan).map(({ port }) => port);

/**
 * A plan on a base whose ports (and `extra` offsets from it, for the caller's own listeners) are all free: blocks of
 * 100 between 20000 and 32000, low enough that the membership ports fit Temporal's SMALLINT column and below the
 * kernel's range for outgoing connections.
 */
export async function freePortPlan(layout: Omit<PortLayout, 'basePort' | 'membershipBasePort'>, extra: number[] = []): Promise<PortPlan> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const plan = planPorts({ basePort: 20_000 + 100 * Math.floor(Math.random() * 120), ...layout });
    const free = await Promise.all([...allPorts(plan), plan.alertReceiver, ...extra.map((offset) => plan.balancer + offset)].map(portIsFree));
    if (free.every(Boolean)) return plan;
  }
  throw new Error('no block of 100 free ports found between 20000 and 32000');
}
