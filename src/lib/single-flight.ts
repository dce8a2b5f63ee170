/** Concurrent callers share one run; the next call after it settles starts a new one. */
export class SingleFlight<T> {
  private running: Promise<T> | null = null;

  run(fn: () => Promise<T>): Promise<T> {
    this.running ??= fn().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
