// The tools. Each function the WIT world exports (wit/world.wit) is
// exported here under its lowerCamelCase name; types/ holds the world as
// TypeScript declarations, written by the build, so tsc checks this file
// against the WIT.
import type * as World from "local:plugin/plugin";

// measure returns result<stats, string>: a returned value is the ok
// case, a thrown string the err case (the client sees isError).
export function measure(text: string): World.Stats {
  if (text === "") throw "no text";
  const bytes = new TextEncoder().encode(text).length;
  const words = text.split(/\s+/).filter((w) => w !== "").length;
  const lines = text.split("\n").length;
  return { bytes, words, lines };
}

// Every export of the world, with the WIT's types: a function missing here
// or of the wrong shape is a compile error, not a failed call.
({ measure }) satisfies typeof World;
