// Usage: ServiceBusEmulatorCheck <connection string> <queue> [<topic> <subscription> [<session queue>]]
// Runs the settlement paths the Functions host relies on (on a queue, on a topic subscription and a
// session queue when they are named) and prints one line per step:
// "PASS <step>: <detail>" or "FAIL <step>: <error>". Exit code 0 only if every step passed.
using Azure.Messaging.ServiceBus;

if (args.Length != 2 && args.Length != 4 && args.Length != 5)
{
    Console.Error.WriteLine("usage: ServiceBusEmulatorCheck <connection string> <queue> [<topic> <subscription> [<session queue>]]");
    return 2;
}

var (connectionString, queue) = (args[0], args[1]);
var failures = 0;
var steps = 0;
var wait = TimeSpan.FromSeconds(5);
await using var client = new ServiceBusClient(connectionString);
await using var sender = client.CreateSender(queue);
await using var receiver = client.CreateReceiver(queue);
await using var deadLetters = client.CreateReceiver(queue, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });

async Task Step(string name, Func<Task<string>> body)
{
    steps++;
    try
    {
        Console.WriteLine($"PASS {name}: {await body()}");
    }
    catch (Exception e)
    {
        failures++;
        Console.WriteLine($"FAIL {name}: {e.GetType().Name}: {e.Message}");
        // Where in the client it failed: the first frames say which part of the protocol it disliked.
        foreach (var frame in (e.StackTrace ?? "").Split('\n').Take(6)) Console.WriteLine($"     {frame.Trim()}");
    }
}

static void Expect(bool condition, string what)
{
    if (!condition) throw new InvalidOperationException($"expected {what}");
}

await Step("send", async () =>
{
    var message = new ServiceBusMessage(BinaryData.FromString("{\"orderId\":\"o-1\"}"))
    {
        MessageId = "dotnet-1",
        Subject = "OrderPlaced",
        ContentType = "application/json",
        CorrelationId = "corr-1",
    };
    message.ApplicationProperties["idempotency-key"] = "k-1";
    await sender.SendMessageAsync(message);
    return "sent dotnet-1";
});

await Step("receive", async () =>
{
    var m = await receiver.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("no message");
    Expect(m.MessageId == "dotnet-1", "MessageId dotnet-1");
    Expect(m.Subject == "OrderPlaced" && m.CorrelationId == "corr-1", "subject and correlation id");
    Expect((string)m.ApplicationProperties["idempotency-key"] == "k-1", "application property");
    Expect(m.DeliveryCount == 1, $"DeliveryCount 1 on the first delivery, got {m.DeliveryCount}");
    Expect(m.SequenceNumber > 0 && m.LockedUntil > DateTimeOffset.UtcNow, "sequence number and lock");
    await receiver.AbandonMessageAsync(m);
    return $"DeliveryCount={m.DeliveryCount} SequenceNumber={m.SequenceNumber}; abandoned";
});

await Step("abandon-redelivers", async () =>
{
    var m = await receiver.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("no redelivery");
    Expect(m.DeliveryCount == 2, $"DeliveryCount 2 after an abandon, got {m.DeliveryCount}");
    await receiver.DeadLetterMessageAsync(m, "PayloadConflict", "fingerprints differ");
    return $"DeliveryCount={m.DeliveryCount}; dead-lettered with a reason";
});

await Step("peek-dead-letter", async () =>
{
    var peeked = await deadLetters.PeekMessagesAsync(10, fromSequenceNumber: 1);
    Expect(peeked.Count == 1, $"one dead-lettered message, got {peeked.Count}");
    Expect(peeked[0].DeadLetterReason == "PayloadConflict", "DeadLetterReason");
    return $"peeked {peeked.Count}, reason {peeked[0].DeadLetterReason}";
});

await Step("complete-dead-letter", async () =>
{
    var m = await deadLetters.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("no dead letter");
    Expect(m.DeadLetterErrorDescription == "fingerprints differ", "DeadLetterErrorDescription");
    await deadLetters.CompleteMessageAsync(m);
    var left = await deadLetters.PeekMessagesAsync(10, fromSequenceNumber: 1);
    Expect(left.Count == 0, "an empty dead-letter queue");
    return "completed; dead-letter queue empty";
});

await Step("complete", async () =>
{
    await sender.SendMessageAsync(new ServiceBusMessage("done") { MessageId = "dotnet-2" });
    var m = await receiver.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("no message");
    await receiver.RenewMessageLockAsync(m);
    await receiver.CompleteMessageAsync(m);
    var left = await receiver.PeekMessagesAsync(10, fromSequenceNumber: 1);
    Expect(left.Count == 0, "an empty queue");
    return "renewed the lock, completed; queue empty";
});

await Step("processor", async () =>
{
    // The Functions host receives through a ServiceBusProcessor with auto-complete.
    await sender.SendMessageAsync(new ServiceBusMessage("processed") { MessageId = "dotnet-3" });
    var seen = new TaskCompletionSource<string>();
    await using var processor = client.CreateProcessor(queue, new ServiceBusProcessorOptions { AutoCompleteMessages = true, MaxConcurrentCalls = 2 });
    processor.ProcessMessageAsync += args => { seen.TrySetResult(args.Message.MessageId); return Task.CompletedTask; };
    processor.ProcessErrorAsync += args => { seen.TrySetException(args.Exception); return Task.CompletedTask; };
    await processor.StartProcessingAsync();
    var id = await seen.Task.WaitAsync(wait);
    await Task.Delay(300);
    await processor.StopProcessingAsync();
    var left = await receiver.PeekMessagesAsync(10, fromSequenceNumber: 1);
    Expect(left.Count == 0, "the processor to auto-complete the message");
    return $"processed {id}, auto-completed";
});

if (args.Length >= 4)
{
    var (topic, subscription) = (args[2], args[3]);
    await using var topicSender = client.CreateSender(topic);
    await using var subscriptionReceiver = client.CreateReceiver(topic, subscription);
    await using var subscriptionDeadLetters = client.CreateReceiver(topic, subscription, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });

    await Step("subscription-receive", async () =>
    {
        await topicSender.SendMessageAsync(new ServiceBusMessage("{}") { MessageId = "dotnet-topic-1", Subject = "OrderAccepted" });
        var m = await subscriptionReceiver.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("nothing reached the subscription");
        Expect(m.MessageId == "dotnet-topic-1" && m.DeliveryCount == 1, $"dotnet-topic-1 on its first delivery, got {m.MessageId} {m.DeliveryCount}");
        await subscriptionReceiver.DeadLetterMessageAsync(m, "CarrierRejected", "no carrier");
        var dead = await subscriptionDeadLetters.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("no dead letter in the subscription");
        Expect(dead.DeadLetterReason == "CarrierRejected", "the subscription's DeadLetterReason");
        await subscriptionDeadLetters.CompleteMessageAsync(dead);
        return "received from the subscription, dead-lettered there with a reason, completed from its dead-letter queue";
    });

    await Step("subscription-processor", async () =>
    {
        await topicSender.SendMessageAsync(new ServiceBusMessage("{}") { MessageId = "dotnet-topic-2", Subject = "OrderAccepted" });
        var seen = new TaskCompletionSource<string>();
        await using var processor = client.CreateProcessor(topic, subscription, new ServiceBusProcessorOptions { AutoCompleteMessages = true });
        processor.ProcessMessageAsync += a => { seen.TrySetResult(a.Message.MessageId); return Task.CompletedTask; };
        processor.ProcessErrorAsync += a => { seen.TrySetException(a.Exception); return Task.CompletedTask; };
        await processor.StartProcessingAsync();
        var id = await seen.Task.WaitAsync(wait);
        await Task.Delay(300);
        await processor.StopProcessingAsync();
        var left = await subscriptionReceiver.PeekMessagesAsync(10, fromSequenceNumber: 1);
        Expect(left.Count == 0, "the processor to auto-complete the subscription's message");
        return $"processed {id} from the subscription, auto-completed";
    });
}

if (args.Length >= 5)
{
    var sessionQueue = args[4];
    await using var sessionSender = client.CreateSender(sessionQueue);

    await Step("session", async () =>
    {
        foreach (var n in new[] { 1, 2, 3 }) await sessionSender.SendMessageAsync(new ServiceBusMessage($"{n}") { MessageId = $"dotnet-session-{n}", SessionId = "order-7" });
        await using var session = await client.AcceptSessionAsync(sessionQueue, "order-7");
        Expect(session.SessionId == "order-7" && session.SessionLockedUntil > DateTimeOffset.UtcNow, $"session order-7 locked into the future, got {session.SessionId} until {session.SessionLockedUntil:O}");
        var got = new List<string>();
        while (got.Count < 3)
        {
            var m = await session.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException($"only {got.Count} of 3 session messages arrived");
            got.Add(m.MessageId);
            await session.CompleteMessageAsync(m);
        }
        Expect(string.Join(",", got) == "dotnet-session-1,dotnet-session-2,dotnet-session-3", $"the session's messages in order, got {string.Join(",", got)}");
        return "accepted order-7, received its three messages in order";
    });

    await Step("session-state-and-renewal", async () =>
    {
        await sessionSender.SendMessageAsync(new ServiceBusMessage("{}") { MessageId = "dotnet-session-state", SessionId = "order-9" });
        await using var session = await client.AcceptSessionAsync(sessionQueue, "order-9");
        var lockedUntil = session.SessionLockedUntil;
        await Task.Delay(50);
        await session.RenewSessionLockAsync();
        Expect(session.SessionLockedUntil > lockedUntil, $"the renewed lock later than {lockedUntil:O}, got {session.SessionLockedUntil:O}");
        await session.SetSessionStateAsync(BinaryData.FromString("step-2"));
        var state = await session.GetSessionStateAsync();
        Expect(state?.ToString() == "step-2", $"session state step-2, got {state}");
        // Requests in flight together on one management link: the client tracks each by its delivery
        // tag (empty on that link) unless the broker's attach keeps the link pre-settled, as Azure's does.
        var together = Enumerable.Range(0, 8).Select(i => i % 2 == 0 ? session.GetSessionStateAsync().ContinueWith(t => t.Result?.ToString() ?? "") : session.RenewSessionLockAsync().ContinueWith(t => { t.Wait(); return "renewed"; }));
        var answers = await Task.WhenAll(together);
        Expect(answers.Count(a => a == "step-2") == 4 && answers.Count(a => a == "renewed") == 4, $"4 states and 4 renewals in flight together, got {string.Join(",", answers)}");
        var m = await session.ReceiveMessageAsync(wait) ?? throw new InvalidOperationException("the session's message did not arrive");
        await session.CompleteMessageAsync(m);
        return "renewed the session lock, set and read its state, 8 management requests in flight together";
    });

    await Step("session-processor", async () =>
    {
        await sessionSender.SendMessageAsync(new ServiceBusMessage("{}") { MessageId = "dotnet-session-next", SessionId = "order-8" });
        var seen = new TaskCompletionSource<string>();
        await using var processor = client.CreateSessionProcessor(sessionQueue, new ServiceBusSessionProcessorOptions { AutoCompleteMessages = true, MaxConcurrentSessions = 1 });
        processor.ProcessMessageAsync += a => { seen.TrySetResult($"{a.SessionId}/{a.Message.MessageId}"); return Task.CompletedTask; };
        processor.ProcessErrorAsync += a => { seen.TrySetException(a.Exception); return Task.CompletedTask; };
        await processor.StartProcessingAsync();
        var id = await seen.Task.WaitAsync(wait);
        await processor.StopProcessingAsync();
        return $"a session processor accepted the next session and processed {id}";
    });
}

Console.WriteLine(failures == 0 ? $"all {steps} steps passed" : $"{failures} of {steps} steps failed");
return failures == 0 ? 0 : 1;
