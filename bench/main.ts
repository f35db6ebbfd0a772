// npm run bench: the consumer paths (bench/consumerPaths.ts); with --chain, the whole chain against a
// bare one (bench/chainBench.ts); with --host, each path through the local Functions host against a
// bare SDK loop (bench/hostBench.ts).
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--chain')) {
    const { runChainBench } = await import('./chainBench.js');
    process.exitCode = (await runChainBench(argv)) ? 0 : 1;
    return;
  }
  if (argv.includes('--host')) {
    const { runHostBench } = await import('./hostBench.js');
    process.exitCode = (await runHostBench(argv)) ? 0 : 1;
    return;
  }
  await import('./consumerPaths.js');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
