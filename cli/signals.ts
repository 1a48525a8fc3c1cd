/** Waiting for Ctrl-C (SIGINT) or SIGTERM: how `turnlog inspect` and `turnlog serve` run until stopped. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}
