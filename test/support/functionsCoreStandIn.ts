// Setup file: installs the worker's '@azure/functions-core' before any test imports the app.
import '../../emulators/functions-host/functionsCore.js';
