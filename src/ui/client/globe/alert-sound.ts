/** The audible half of an entry alert (the visible half is the page's alert list). */
/** A short two-tone beep through WebAudio; browsers allow sound only after a user gesture. */
export class AlertSound {
  private ctx: AudioContext | null = null;
  beeps = 0;
  enabled = false;

  /** Call from a user gesture (the checkbox click) so the browser lets the page play sound. */
  enable(on: boolean): void {
    this.enabled = on;
    if (on && !this.ctx) this.ctx = new AudioContext();
    if (on) void this.ctx?.resume();
  }

  get state(): string {
    return this.ctx?.state ?? 'off';
  }

  beep(): void {
    if (!this.enabled || !this.ctx) return;
    const t = this.ctx.currentTime;
    for (const [i, f] of [880, 660].entries()) {
      const osc = this.ctx.createOscillator();
      const gain = this.ctx.createGain();
      osc.frequency.value = f;
      gain.gain.setValueAtTime(0.2, t + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(0.001, t + i * 0.18 + 0.16);
      osc.connect(gain).connect(this.ctx.destination);
      osc.start(t + i * 0.18);
      osc.stop(t + i * 0.18 + 0.17);
    }
    this.beeps++;
  }
}
