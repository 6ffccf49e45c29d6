// Preloaded with `node --import ./loopback.mjs`: every TCP server of the process binds
// 127.0.0.1, whatever host (or none) the program asked for, and the first one announces the
// address it got on stderr as `tasksim-peers: listening on 127.0.0.1:PORT`, so that PORT=0
// works for programs that print only the port they were given.
//
// The servers under test (server-everything's express `app.listen(PORT)`) bind every
// interface by default; tests must never do that. Unix sockets and handles are left alone.
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;
let announced = false;

function isPort(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));
}

// isTCPOptions: listen's options object for TCP, not a unix socket path, a file
// descriptor or a handle (an object with _handle: a server or socket to share).
function isTCPOptions(v) {
  return v !== null && typeof v === 'object' && v.path === undefined && v.fd === undefined &&
    v.handle === undefined && v._handle === undefined;
}

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (isPort(first)) {
    // listen(port[, host][, backlog][, callback]): replace or insert the host.
    if (typeof args[1] === 'string') args[1] = LOOPBACK;
    else args.splice(1, 0, LOOPBACK);
  } else if (isTCPOptions(first)) {
    // listen(options[, callback]) with a port (or none: an ephemeral one).
    args[0] = { ...first, host: LOOPBACK };
  } else if (first === undefined || typeof first === 'function') {
    // listen([callback]): an ephemeral port on every interface, unless told otherwise.
    args.unshift(0, LOOPBACK);
  }
  this.once('listening', () => {
    const a = this.address();
    if (!announced && a && typeof a === 'object') {
      announced = true;
      process.stderr.write(`tasksim-peers: listening on ${a.address}:${a.port}\n`);
    }
  });
  return listen.apply(this, args);
};
