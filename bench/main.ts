// npm run bench: the consumer paths (bench/consumerPaths.ts); with --chain, the whole chain against a
// bare one (bench/chainBench.ts).
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (!argv.includes('--chain')) {
    await import('./consumerPaths.js');
    return;
  }
  const { runChainBench } = await import('./chainBench.js');
  process.exitCode = (await runChainBench(argv)) ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
