#!/usr/bin/env bash
# Prints the path of the Bicep CLI, restoring it from NuGet on first use (cached in ~/.nuget/packages).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=0.49.2
packages="${NUGET_PACKAGES:-$HOME/.nuget/packages}"
bicep="$packages/azure.bicep.commandline.linux-x64/$version/tools/bicep"
if [ ! -x "$bicep" ]; then
  dotnet restore "$here/restore-bicep.csproj" --verbosity quiet >&2
  chmod +x "$bicep" 2>/dev/null || true
fi
[ -x "$bicep" ] || { echo "Bicep CLI not found at $bicep after restore" >&2; exit 1; }
echo "$bicep"
