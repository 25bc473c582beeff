// npm's postinstall: put the platform package's native binary where npm linked the launcher
// (bin/context-pilot), so the command on PATH is the binary itself and no hook or MCP server
// ever starts Node. Also writes the install-channel marker `--version` reads. When the
// platform package is missing, the launcher stays and says what to do when run. When npm
// does not run install scripts, the launcher does the same on its first run.
"use strict";
const fs = require("fs");
const path = require("path");
const { nativeBinary } = require("./platform.js");

function placeNative() {
  const binary = nativeBinary();
  const marker = path.join(__dirname, "share", "context-pilot", "install-channel");
  fs.mkdirSync(path.dirname(marker), { recursive: true });
  fs.writeFileSync(marker, "npm\n");
  const launcher = path.join(__dirname, "bin", "context-pilot");
  const staged = `${launcher}.native-${process.pid}`;
  fs.copyFileSync(binary, staged);
  fs.chmodSync(staged, 0o755);
  fs.renameSync(staged, launcher);
}

module.exports = { placeNative };

if (require.main === module) {
  try {
    placeNative();
  } catch (e) {
    console.warn(`context-pilot: ${e.message}`);
  }
}
