// Preloaded into Node peers (`node --require loopback.cjs ...`) so that servers which call
// `listen(PORT)` without a host (server-everything passes PORT as a string) bind to
// 127.0.0.1 only, never to every interface (docs/mcp.md#tests).
const net = require("net");
const listen = net.Server.prototype.listen;
const isPort = (value) => typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
net.Server.prototype.listen = function (...args) {
  if (isPort(args[0]) && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && !args[0].host && !args[0].path) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
