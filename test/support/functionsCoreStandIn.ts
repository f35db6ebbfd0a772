// Setup file: installs the worker's '@azure/functions-core' before any test imports the app.
import '../../dev/host/functionsCore.js';
