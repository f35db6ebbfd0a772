import { isSecureOrLoopback, secureOrLoopbackRule } from '../http/index.js';
import { withClientSpan } from '../telemetry/index.js';
import { idempotencyKeyHeader, idempotencyKeyValue, retryAfterMs } from './carrierHeaders.js';
import { CarrierUnavailableError } from './carrierClient.js';
import type { BookingAnswer, BookingRequest, CarrierAnswer, CarrierClient, LookupAnswer } from './carrierClient.js';

export interface HttpCarrierOptions {
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** Each call is abandoned after this; its outcome is then unknown (CarrierUnavailableError). */
  readonly timeoutMs: number;
  /** The clock a Retry-After given as an HTTP date is measured against. */
  readonly now: () => Date;
  /** Longer answers are an error, and are not read past this. **Default**: 64 KiB. */
  readonly maxAnswerBytes?: number;
  readonly fetch?: typeof fetch;
}

const defaultMaxAnswerBytes = 64 * 1024;

/** A base URL the client will not send a credential or a shipment to. */
export class InsecureCarrierUrlError extends Error {
  override readonly name = 'InsecureCarrierUrlError';
}

/**
 * Statuses that settle nothing: a credential not yet valid (a rotated key, a Key Vault reference
 * still resolving), a request the carrier is still handling, throttling. Every other 4xx is the
 * carrier's answer about this shipment.
 */
const notAnAnswer = new Set([401, 403, 408, 409, 425, 429]);

/** 5xx and the statuses above: whether the carrier sent it now or keeps it under the key, nothing is settled. */
const settlesNothing = (status: number): boolean => status >= 500 || notAnAnswer.has(status);

/** The carrier's booking API over HTTP (the contract emulators/carrier-emulator/ stands in for). */
export class HttpCarrierClient implements CarrierClient {
  private readonly fetch: typeof fetch;

  private readonly maxAnswerBytes: number;

  constructor(private readonly options: HttpCarrierOptions) {
    if (!URL.canParse(options.baseUrl) || !isSecureOrLoopback(new URL(options.baseUrl))) {
      throw new InsecureCarrierUrlError(`the carrier base URL ${options.baseUrl} ${secureOrLoopbackRule}`);
    }
    this.fetch = options.fetch ?? globalThis.fetch;
    this.maxAnswerBytes = options.maxAnswerBytes ?? defaultMaxAnswerBytes;
  }

  async book(request: BookingRequest): Promise<BookingAnswer> {
    const response = await this.call('POST', 'shipments', request.traceparent, {
      headers: { 'Idempotency-Key': idempotencyKeyHeader(request.idempotencyKey), 'Content-Type': 'application/json' },
      body: JSON.stringify(request.shipment),
    });
    return answerOf({ status: response.status, body: response.body });
  }

  async lookup(idempotencyKey: string, traceparent?: string): Promise<LookupAnswer> {
    const response = await this.call('GET', `shipments?idempotencyKey=${encodeURIComponent(idempotencyKeyValue(idempotencyKey))}`, traceparent, {}, [404, 409]);
    if (response.status === 404) return { kind: 'not-found' };
    if (response.status === 409) return { kind: 'in-flight' };
    const stored = response.body as { status?: unknown; body?: unknown } | undefined;
    if (typeof stored?.status !== 'number')
      throw new CarrierUnavailableError(`the carrier's look-up answered ${response.status} without the stored status`, response.status);
    // A carrier may keep an error answer under the key (Stripe does): it booked nothing, and that is no refusal.
    if (settlesNothing(stored.status)) {
      throw new CarrierUnavailableError(
        `the carrier keeps a ${stored.status} answer under this key: nothing booked, and no answer yet${titleOf(stored.body)}`,
        stored.status,
      );
    }
    return answerOf({ status: stored.status, body: stored.body });
  }

  /** `path` is relative (no leading slash), so it is resolved under the base URL's own path. */
  // Stryker disable next-line ArrayDeclaration: a default list holding a string matches no status, exactly as the empty one
  private async call(
    method: string,
    path: string,
    traceparent: string | undefined,
    init: { headers?: Record<string, string>; body?: string },
    accepted: number[] = [],
  ): Promise<CarrierAnswer> {
    const url = new URL(path, this.options.baseUrl.endsWith('/') ? this.options.baseUrl : `${this.options.baseUrl}/`);
    let response: Response;
    try {
      const attributes = { 'http.request.method': method, 'url.full': `${url.origin}${url.pathname}`, 'server.address': url.hostname };
      response = await withClientSpan(
        `${method} ${url.pathname}`,
        attributes,
        traceparent,
        (header) =>
          this.fetch(url, {
            method,
            headers: {
              Accept: 'application/json',
              ...(this.options.apiKey ? { Authorization: `Bearer ${this.options.apiKey}` } : {}),
              ...(header ? { traceparent: header } : {}),
              ...init.headers,
            },
            body: init.body,
            // A redirect is refused below, never followed: it would take the credential and the shipment elsewhere.
            redirect: 'manual',
            signal: AbortSignal.timeout(this.options.timeoutMs),
          }),
        (r) => r.status,
      );
    } catch (error) {
      // A timeout or a dropped connection: the carrier may have booked, and we cannot know.
      const why =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${this.options.timeoutMs} ms`
          : `the connection failed (${errorText(error)})`;
      throw new CarrierUnavailableError(`${method} ${url.pathname}: ${why}`, undefined, undefined, { cause: error });
    }
    const where = `${method} ${url.pathname}`;
    const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
    if (location !== null) {
      await response.body?.cancel().catch(() => undefined);
      throw new CarrierUnavailableError(`${where}: the carrier redirected to ${location}, and redirects are refused (check CARRIER_API_URL)`, response.status);
    }
    const body = await readBody(response, this.maxAnswerBytes, where);
    const { status } = response;
    if (accepted.includes(status) || !settlesNothing(status)) return { status, body };
    const wait = retryAfterMs(response.headers.get('retry-after'), this.options.now().getTime());
    throw new CarrierUnavailableError(`${method} ${url.pathname}: the carrier answered ${status}${titleOf(body)}`, status, wait);
  }
}

function answerOf(answer: CarrierAnswer): BookingAnswer {
  if (answer.status >= 200 && answer.status < 300) {
    const shipmentId = (answer.body as { shipmentId?: unknown } | undefined)?.shipmentId;
    if (typeof shipmentId !== 'string' || shipmentId === '')
      throw new CarrierUnavailableError(`the carrier answered ${answer.status} without a shipmentId`, answer.status);
    return { kind: 'booked', shipmentId, answer };
  }
  return { kind: 'refused', answer, reason: `the carrier answered ${answer.status}${titleOf(answer.body)}` };
}

/** JSON, else text cut at 2000 characters; none when empty or unreadable. Past `maxBytes`, an error: the rest is not read. */
async function readBody(response: Response, maxBytes: number, where: string): Promise<unknown> {
  const text = await boundedText(response, maxBytes);
  if (text === undefined)
    throw new CarrierUnavailableError(`${where}: the carrier's answer (${response.status}) is longer than ${maxBytes} bytes`, response.status);
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text.slice(0, 2000);
  }
}

/** The answer's text, or undefined once it passes `maxBytes` (the stream is then cancelled); '' when the stream fails. */
async function boundedText(response: Response, maxBytes: number): Promise<string | undefined> {
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      size += chunk.value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      chunks.push(chunk.value);
    }
  } catch {
    return '';
  }
  return Buffer.concat(chunks).toString('utf8');
}

function titleOf(body: unknown): string {
  const title = (body as { title?: unknown; detail?: unknown } | undefined)?.title;
  return typeof title === 'string' ? `: ${title}` : '';
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}
