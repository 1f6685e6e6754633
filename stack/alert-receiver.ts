import { EventEmitter, once } from 'node:events';
import http from 'node:http';

/**
 * The webhook receiver that Alertmanager notifies on the stack (deploy/alertmanager/alertmanager.yml, made local by
 * the stack: RunningStack.alertReceiverUrl): it keeps every notification with the time it arrived, for the alert
 * drill and the stack test. Alertmanager's webhook payload, version 4.
 */

export interface NotifiedAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  startsAt: string;
  endsAt: string;
}

export interface AlertNotification {
  receivedAt: Date;
  status: 'firing' | 'resolved';
  groupLabels: Record<string, string>;
  alerts: NotifiedAlert[];
}

export interface AlertReceiver {
  notifications: AlertNotification[];
  /** The first notification, already received or yet to come, that carries the alert in that status. */
  waitFor(alertname: string, status: 'firing' | 'resolved', timeoutMs: number): Promise<AlertNotification>;
  close(): Promise<void>;
}

const carries = (notification: AlertNotification, alertname: string, status: string) =>
  notification.alerts.some((alert) => alert.labels.alertname === alertname && alert.status === status);

/** Listens on the host and port of `url` (loopback), answering 200 to every POST it can read. */
export async function startAlertReceiver(url: string): Promise<AlertReceiver> {
  const notifications: AlertNotification[] = [];
  const arrived = new EventEmitter();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<AlertNotification, 'receivedAt'>;
        const notification = { receivedAt: new Date(), status: body.status, groupLabels: body.groupLabels, alerts: body.alerts };
        notifications.push(notification);
        arrived.emit('notification', notification);
        res.writeHead(200).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  const { hostname, port } = new URL(url);
  server.listen(Number(port), hostname);
  await once(server, 'listening');
  return {
    notifications,
    async waitFor(alertname, status, timeoutMs) {
      const found = notifications.find((notification) => carries(notification, alertname, status));
      if (found) return found;
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        for await (const [notification] of EventEmitter.on(arrived, 'notification', { signal }) as AsyncIterable<[AlertNotification]>) {
          if (carries(notification, alertname, status)) return notification;
        }
      } catch (err) {
        if (signal.aborted) throw new Error(`no ${status} ${alertname} notification within ${timeoutMs / 1000} s`);
        throw err;
      }
      throw new Error('the receiver stopped');
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
