// Gives preview2-shim's filesystem the root preopen, then runs the CLI given as argv[2].
import { _setPreopens } from '@bytecodealliance/preview2-shim/filesystem';
_setPreopens({ '/': '/' });
const entry = process.argv[2];
process.argv.splice(2, 1);
await import(entry);
