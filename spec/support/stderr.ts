/**
 * What the code under test writes to process.stderr (the default logger's lines), kept off the
 * terminal: for specs that check a failure is visible without a logger, as a user would see it.
 */
export async function stderrWhile(run: () => Promise<unknown>): Promise<string[]> {
  const written: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return written;
}
