import { runService } from './app/run.js';

// `npm start`: the bot (long polling, or webhook served by the HTTP server) and the HTTP API over one core.
await runService();
