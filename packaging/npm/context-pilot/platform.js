// Which platform package holds the native binary for this machine, and where the binary is.
// Only Linux x86-64 is built; docs/design/other-platforms.md says what the others need.
"use strict";
const path = require("path");

const PACKAGES = { "linux x64": "@context-pilot/linux-x64" };

function nativeBinary() {
  const key = `${process.platform} ${process.arch}`;
  const name = PACKAGES[key];
  if (!name) {
    throw new Error(
      `Context Pilot has no binary for ${key} yet (only Linux x86-64 is built); ` +
        "build it from source with `cargo install context-pilot`"
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch (e) {
    throw new Error(
      `${name} is not installed (npm skipped the optional dependency); ` +
        "reinstall with `npm install -g context-pilot --include=optional`"
    );
  }
  return path.join(path.dirname(manifest), "bin", "context-pilot");
}

module.exports = { nativeBinary };
