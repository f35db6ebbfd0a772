// Usage: CosmosChangeFeedCheck <endpoint> <key>
// Prints PASS/FAIL per step and "all N steps passed" at the end.
using System.Collections.Concurrent;
using Microsoft.Azure.Cosmos;

var endpoint = args[0];
var key = args[1];
var failures = 0;
var steps = 0;
void Report(bool ok, string step, string detail)
{
    steps++;
    if (!ok) failures++;
    Console.WriteLine($"{(ok ? "PASS" : "FAIL")} {step}: {detail}");
}

var options = new CosmosClientOptions
{
    ConnectionMode = ConnectionMode.Gateway,
    LimitToEndpoint = true,
    // The stand-in's certificate is self-signed, as the emulator's is.
    HttpClientFactory = () => new HttpClient(new HttpClientHandler { ServerCertificateCustomValidationCallback = HttpClientHandler.DangerousAcceptAnyServerCertificateValidator }),
};
using var client = new CosmosClient(endpoint, key, options);
var database = (await client.CreateDatabaseIfNotExistsAsync($"cfp-{Guid.NewGuid():N}"[..12])).Database;
try
{
    var monitored = (await database.CreateContainerAsync("monitored", "/pk")).Container;
    var leases = (await database.CreateContainerAsync("leases", "/id")).Container;
    for (var i = 0; i < 5; i++) await monitored.CreateItemAsync(new Doc { id = $"before-{i}", pk = $"p{i % 2}" }, new PartitionKey($"p{i % 2}"));

    var seen = new ConcurrentBag<string>();
    ChangeFeedProcessor Build(string instance) => monitored
        .GetChangeFeedProcessorBuilder<Doc>("check", (ChangeFeedProcessorContext context, IReadOnlyCollection<Doc> changes, CancellationToken token) =>
        {
            foreach (var change in changes) seen.Add(change.id);
            return Task.CompletedTask;
        })
        .WithInstanceName(instance)
        .WithLeaseContainer(leases)
        // What the Functions extension does for startFromBeginning.
        .WithStartTime(DateTime.MinValue.ToUniversalTime())
        .WithPollInterval(TimeSpan.FromMilliseconds(200))
        .WithLeaseConfiguration(acquireInterval: TimeSpan.FromMilliseconds(500), expirationInterval: TimeSpan.FromSeconds(3), renewInterval: TimeSpan.FromSeconds(1))
        .Build();

    async Task<bool> Until(Func<bool> condition, int seconds)
    {
        var deadline = DateTime.UtcNow.AddSeconds(seconds);
        while (DateTime.UtcNow < deadline) { if (condition()) return true; await Task.Delay(100); }
        return condition();
    }

    var first = Build("first");
    await first.StartAsync();
    var all = await Until(() => seen.Distinct().Count() == 5, 30);
    Report(all, "start-from-beginning", $"{seen.Distinct().Count()} of 5 documents written before the processor started");

    await monitored.CreateItemAsync(new Doc { id = "live", pk = "p0" }, new PartitionKey("p0"));
    Report(await Until(() => seen.Contains("live"), 15), "live", "a document written while it runs is delivered");

    var leaseIds = new List<string>();
    using (var it = leases.GetItemQueryIterator<dynamic>("SELECT * FROM c"))
        while (it.HasMoreResults) foreach (var d in await it.ReadNextAsync()) leaseIds.Add((string)d.id);
    Report(leaseIds.Count >= 1, "leases", $"{leaseIds.Count} document(s) in the lease container: {string.Join(", ", leaseIds)}");

    await first.StopAsync();
    var countAtStop = seen.Count;
    await monitored.CreateItemAsync(new Doc { id = "while-stopped", pk = "p1" }, new PartitionKey("p1"));
    var second = Build("second");
    await second.StartAsync();
    var resumed = await Until(() => seen.Contains("while-stopped"), 30);
    await Task.Delay(1000);
    var redelivered = seen.Skip(0).Count() - countAtStop - 1;
    Report(resumed, "continuation", "a second instance resumes from the lease's checkpoint: the document written while stopped is delivered");
    Report(redelivered == 0, "checkpoint", $"{redelivered} document(s) delivered again after the restart (0: the checkpoint held)");
    await second.StopAsync();
}
catch (Exception e)
{
    Report(false, "exception", e.Message.Length > 800 ? e.Message[..800] : e.Message);
}
finally
{
    await database.DeleteAsync();
}
Console.WriteLine(failures == 0 ? $"all {steps} steps passed" : $"{failures} of {steps} steps failed");
return failures == 0 ? 0 : 1;

public class Doc
{
    public string id { get; set; } = "";
    public string pk { get; set; } = "";
}
