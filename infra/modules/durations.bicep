// Shared by the Service Bus modules: Azure takes durations as ISO 8601, the queue file gives seconds.
@export()
@description('ISO 8601 duration for a number of seconds, e.g. 600 -> PT10M, 1209600 -> P14D.')
func isoDuration(seconds int) string =>
  'P${seconds / 86400 > 0 ? '${seconds / 86400}D' : ''}${seconds % 86400 > 0 ? 'T' : ''}${(seconds % 86400) / 3600 > 0 ? '${(seconds % 86400) / 3600}H' : ''}${(seconds % 3600) / 60 > 0 ? '${(seconds % 3600) / 60}M' : ''}${seconds % 60 > 0 ? '${seconds % 60}S' : ''}'
