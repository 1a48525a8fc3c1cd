/**
 * Whole-log work (the checkpoint fold, verify, the transcript) in slices between frames and input,
 * so the page paints first and stays responsive while a big log is folded. `work()` does one small
 * unit (about 2,000 events) and returns true while there is more; slices of ~12 ms are separated by
 * a MessageChannel task (setTimeout(0) would be clamped to 4 ms after a few nested calls). Input
 * events and frames run between slices.
 */
export class Background {
  readonly #channel = new MessageChannel()
  #queued = false

  constructor(private readonly work: () => boolean, private readonly sliceMs = 12) {
    this.#channel.port1.onmessage = () => this.#run()
  }

  /** Makes sure a slice runs soon (after new events arrive, or at start). */
  kick(): void {
    if (this.#queued) return
    this.#queued = true
    this.#channel.port2.postMessage(0)
  }

  #run(): void {
    this.#queued = false
    const began = performance.now()
    let more = true
    while (more && performance.now() - began < this.sliceMs) more = this.work()
    if (more) this.kick()
  }
}
