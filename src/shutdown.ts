/** How far past `server.shutdownTimeoutMs` a shutdown may run: closing the worker threads, the
 * store and the features after the connections are cut. At this point the process exits anyway. */
export const SHUTDOWN_MARGIN_MS = 1000;
