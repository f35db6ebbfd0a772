/**
 * The trigger metadata a Service Bus–triggered Node function gets, built as the Functions host builds
 * it: the extension's binding data (ServiceBusTriggerBindingStrategy, PascalCase names), then, when
 * the message body is a JSON object, each of its top-level properties written over it by name, case
 * ignored (azure-functions-host Utility.ApplyBindingData, called by WorkerFunctionInvoker.TransformInput
 * on the trigger value; the binding data is an OrdinalIgnoreCase dictionary; arrays and nulls are left
 * out, an object stays an object, anything else becomes its text). Then the Node library lower-cases
 * each name's first letter. Public reports of the same: Azure/azure-functions-nodejs-library#459
 * (queue trigger), Azure/azure-functions-dotnet-worker#991 (Service Bus trigger, out of process).
 * OrdinalIgnoreCase compares upper-cased characters, so `ſequenceNumber` (a long s, whose upper case
 * is S) is SequenceNumber to the host: names are folded here with toUpperCase, as it does.
 */
export function triggerMetadataAsTheHostSendsIt(brokerFields: Readonly<Record<string, unknown>>, body: unknown): Record<string, unknown> {
  const byName = new Map<string, { name: string; value: unknown }>();
  for (const [name, value] of Object.entries(brokerFields)) {
    if (value !== undefined) byName.set(name.toUpperCase(), { name, value });
  }
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      if (value === null || value === undefined || Array.isArray(value)) continue;
      const kept = byName.get(name.toUpperCase())?.name ?? name;
      byName.set(name.toUpperCase(), { name: kept, value: typeof value === 'object' ? value : asJTokenText(value) });
    }
  }
  return Object.fromEntries([...byName.values()].map(({ name, value }) => [name.charAt(0).toLowerCase() + name.slice(1), value]));
}

/** What `(string)JToken` gives for a JSON scalar: numbers as written, booleans as .NET spells them. */
function asJTokenText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}
