/**
 * The gateway's listening server: `node:http`, or `node:https` when `server.tls` is configured
 * (TLS 1.2 and later, the certificate files watched and reloaded, client certificates asked
 * for or required as `clientCertificates` says). Both get the same options (timeouts) and
 * handler, so nothing about a request differs but the transport.
 *
 * @example
 * ```ts
 * const { server, scheme, close } = createListener(config.server, { logger }, handle);
 * ```
 */
import { createServer as createHttpServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { SecureVersion } from 'node:tls';
import type { TlsMaterial, TlsSettings } from '../../config/load.js';
import type { Logger } from '../log.js';
import { watchTlsFiles, type TlsWatchTiming, type TlsWatcher } from './watch.js';

export { CertificateIdentities } from './identity.js';
export { watchTlsFiles, type TlsWatchTiming, type TlsWatcher } from './watch.js';

/** TLS 1.0 and 1.1 are refused in the handshake. */
export const TLS_MIN_VERSION: SecureVersion = 'TLSv1.2';

/**
 * The listening server, its URL scheme, and what to stop with it (the file watcher).
 *
 * @example
 * ```ts
 * const url = `${listener.scheme}://127.0.0.1:${port}`;
 * ```
 */
export interface Listener {
  server: Server;
  scheme: 'http' | 'https';
  close(): void;
}

/**
 * The secure-context options for one certificate/key pair (and client CA).
 *
 * @example
 * ```ts
 * server.setSecureContext(secureContextOptions(readTlsMaterial(files)));
 * ```
 */
export function secureContextOptions(material: TlsMaterial): {
  cert: string;
  key: string;
  ca?: string;
  minVersion: SecureVersion;
} {
  return {
    cert: material.cert,
    key: material.key,
    ...(material.ca !== undefined && { ca: material.ca }),
    minVersion: TLS_MIN_VERSION,
  };
}

/**
 * Creates the server: plain HTTP without `tls`, else HTTPS with the files watched (`watch`:
 * the timing, small in tests).
 *
 * @example
 * ```ts
 * const listener = createListener(config.server, { logger }, handle, { headersTimeout: 10_000 });
 * ```
 */
export function createListener(
  settings: { tls?: TlsSettings | undefined },
  context: { logger: Logger; watch?: TlsWatchTiming },
  handler: RequestListener,
  options: ServerOptions,
): Listener {
  const { tls } = settings;
  if (tls === undefined) return { server: createHttpServer(options, handler), scheme: 'http', close: () => undefined };
  const server = createHttpsServer(
    {
      ...options,
      ...secureContextOptions(tls),
      // `request`: a certificate is asked for and verified, but the connection stays without
      // one (or with a bad one): only a verified certificate is an identity (identity.ts).
      requestCert: tls.clientCertificates !== 'off',
      rejectUnauthorized: tls.clientCertificates === 'require',
    },
    handler,
  );
  server.on('tlsClientError', (error: NodeJS.ErrnoException) => {
    context.logger.info({ event: 'tls_handshake_failed', reason: error.code ?? 'unknown' });
  });
  const watcher: TlsWatcher = watchTlsFiles(
    tls,
    (material) => server.setSecureContext(secureContextOptions(material)),
    {
      logger: context.logger,
      ...context.watch,
    },
  );
  return { server, scheme: 'https', close: () => watcher.close() };
}
