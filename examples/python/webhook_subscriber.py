"""An example webhook subscriber in Python, standard library plus the official `standardwebhooks` package
(pip install standardwebhooks). docs/consuming-webhooks.md explains each step.

    WEBHOOK_SECRET=whsec_... PORT=4001 python3 examples/python/webhook_subscriber.py

It verifies the signature over the exact body bytes, stores the event under its `id` (a duplicate is stored once)
and answers 204 before doing any work; processing would read the inbox later. Here the inbox is a dict; use a
table with the event id as primary key.
"""

import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

MAX_BODY_BYTES = 1024 * 1024


def make_handler(webhook: Webhook, inbox: dict):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            if length > MAX_BODY_BYTES:
                return self.answer(413)
            body = self.rfile.read(length)
            try:
                # The exact bytes received: parsing and re-serialising would change them.
                envelope = webhook.verify(body, dict(self.headers.items()))
            except WebhookVerificationError as error:
                return self.answer(401, str(error))
            seen = envelope["id"] in inbox
            inbox.setdefault(envelope["id"], envelope)
            # The platform keeps the body of the answer (16 KiB) for its admin page: say what happened.
            self.answer(200, f"{'duplicate' if seen else 'stored'} {envelope['id']} {envelope['event']}")

        def answer(self, status: int, text: str = ""):
            payload = text.encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "text/plain; charset=utf-8")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format, *args):
            sys.stderr.write("%s\n" % (format % args))

    return Handler


def main():
    secret = os.environ.get("WEBHOOK_SECRET")
    if not secret:
        sys.exit("Set WEBHOOK_SECRET to the signing secret configured for the endpoint (whsec_...)")
    # A secret without the whsec_ prefix is used by the platform as its UTF-8 bytes: Webhook(secret.encode()).
    webhook = Webhook(secret)
    inbox: dict = {}
    port = int(os.environ.get("PORT", "4001"))
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(webhook, inbox))
    print(f"Listening on http://127.0.0.1:{port}/webhooks", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
