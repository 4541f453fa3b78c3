import { createServer } from 'node:net';
import { type Config, ConfigError } from './config.js';

interface Listener {
  /** The settings that name it, as the message says them. */
  port: 'HTTP_PORT' | 'METRICS_PORT';
  host: 'HTTP_HOST' | 'METRICS_HOST';
}

/** Whether `port` can be listened on at `host` now: nothing, or what stands in the way. */
function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * Refuses a start whose listeners could not listen (a port another process holds, a privileged port,
 * a host that is not this machine's), before anything is opened or created: the database file and a
 * new card-data key are made only once the ports are known to be free. A port of 0 (any free one) is
 * never refused. The check is a moment before the real listen, so a port taken in between still fails
 * the start there, later.
 */
export async function refuseUnusablePorts(config: Config): Promise<void> {
  const listeners: Listener[] = [];
  if (config.HTTP_ENABLED) listeners.push({ port: 'HTTP_PORT', host: 'HTTP_HOST' });
  if (config.METRICS_PORT !== undefined) listeners.push({ port: 'METRICS_PORT', host: 'METRICS_HOST' });
  for (const listener of listeners) {
    const port = config[listener.port]!;
    const host = config[listener.host];
    if (port === 0) continue;
    const error = await tryListen(host, port);
    if (error === undefined) continue;
    const where = `${listener.port}=${port} on ${listener.host}=${host}`;
    if (error.code === 'EADDRINUSE') {
      throw new ConfigError(
        `${where}: the port is already in use by another process (another copy of this service?): stop that process, or set ${listener.port} to a free port`,
      );
    }
    if (error.code === 'EACCES') {
      throw new ConfigError(
        `${where}: this user may not listen on that port (ports below 1024 need privileges): set ${listener.port} to 1024 or above`,
      );
    }
    if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
      throw new ConfigError(
        `${where}: ${host} is not an address of this machine: set ${listener.host} to one (127.0.0.1, or 0.0.0.0 for every address)`,
      );
    }
    throw new ConfigError(`${where}: cannot listen there (${error.code ?? error.message})`);
  }
}
