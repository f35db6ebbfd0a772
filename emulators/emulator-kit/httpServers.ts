import type { IncomingMessage, Server } from 'node:http';
import type { Server as TlsServer } from 'node:https';

/** The whole body of a request, as the stand-ins and the local host read it. */
export async function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Stops listening and drops every open connection at once (keep-alive sockets would hold close() open). */
export async function closeServer(server: Server | TlsServer): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
