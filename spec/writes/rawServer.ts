import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { plainKubeConfig } from '../badInput/rawApiServer';

/**
 * A raw HTTP server for the client half of writes: each test answers each request as the API
 * server's documented wire behaviour says (including answers the loopback server does not give),
 * and reads back exactly what the client sent.
 */

/** One request as received, its body read. */
export interface ReceivedWrite {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** An answer: a status code and a JSON body; `hold: true` never answers (the client must abort). */
export type WriteAnswer = { readonly code: number; readonly body: unknown } | { readonly hold: true };

export interface RawWriteServer {
  readonly kubeConfig: KubeConfig;
  readonly received: readonly ReceivedWrite[];
  /** Resolves when a held request's connection closes (the client aborted it). */
  readonly heldClosed: Promise<void>;
  close(): Promise<void>;
}

export async function startRawWriteServer(answer: (request: ReceivedWrite) => WriteAnswer): Promise<RawWriteServer> {
  const received: ReceivedWrite[] = [];
  const sockets = new Set<Socket>();
  let heldClosed!: () => void;
  const held = new Promise<void>((resolve) => (heldClosed = resolve));
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', 'http://raw');
      const request: ReceivedWrite = { method: incoming.method ?? '', path: url.pathname, query: url.searchParams, headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      const reply = answer(request);
      if ('hold' in reply) {
        response.on('close', () => heldClosed());
        return;
      }
      response.writeHead(reply.code, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    kubeConfig: plainKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    received,
    heldClosed: held,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The Status the API server answers an apply that conflicts (apimachinery
 * `managedfields/internal/conflict.go`, `NewConflictError` then `errors.NewApplyConflict`): 409
 * Conflict, one cause of type FieldManagerConflict per field, and the summary message.
 */
export function applyConflictStatus(conflicts: readonly { readonly manager: string; readonly field: string }[]): unknown {
  const message =
    conflicts.length === 1
      ? `Apply failed with 1 conflict: ${conflicts[0]!.manager}: ${conflicts[0]!.field}`
      : `Apply failed with ${conflicts.length} conflicts: ${conflicts.map((conflict) => `conflicts with ${conflict.manager.slice('conflict with '.length)}:\n- ${conflict.field}`).join('\n')}`;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Conflict',
    details: { causes: conflicts.map((conflict) => ({ reason: 'FieldManagerConflict', message: conflict.manager, field: conflict.field })) },
    code: 409,
  };
}
