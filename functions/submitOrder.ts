import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { loadSettings } from '../src/config.js';
import { createOrderIntake } from '../src/intake/index.js';

const intake = createOrderIntake(loadSettings());

/** POST /api/orders with an Idempotency-Key: the order is accepted once, its OrderPlaced published through the outbox. */
export async function submitOrder(request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> {
  // The body as a stream: the intake reads it with its bound (INTAKE_MAX_BODY_BYTES), never whole.
  const response = await intake.handle(
    { headers: request.headers, body: request.body as ReadableStream<Uint8Array> | null },
    { invocationId: context.invocationId, log: context, traceparent: context.traceContext?.traceParent ?? undefined },
  );
  return { status: response.status, headers: response.headers, body: JSON.stringify(response.body) };
}

app.http('submitOrder', {
  methods: ['POST'],
  route: 'orders',
  // A function key (x-functions-key header or ?code=); with intakeAuthEnabled, App Service authentication checks an
  // Entra ID token first and the intake scopes keys by its principal (docs/deployment.md).
  authLevel: 'function',
  handler: submitOrder,
});
