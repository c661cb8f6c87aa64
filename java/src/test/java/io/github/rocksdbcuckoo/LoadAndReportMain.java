// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * Loads the native library in a JVM of its own, then reports what the
 * process has mapped: "loaded" or "refused: <message>", then a "mapped:
 * <path>" line per library of rocksdb-cuckoo in /proc/self/maps. With no
 * argument from forged resources that name another release
 * (LoaderAndLifecycleTest); with --real from the jar's own
 * (scripts/test-java-versions.sh runs it beside another release's
 * rocksdbjni).
 */
public final class LoadAndReportMain {
  private LoadAndReportMain() {}

  public static void main(final String[] args) throws Exception {
    try {
      if (args.length > 0 && args[0].equals("--real")) {
        NativeLoader.load();
      } else {
        NativeLoader.load(LoaderAndLifecycleTest.FORGED_ROOT);
      }
      System.out.println("loaded");
    } catch (final IncompatibleRocksDBException e) {
      System.out.println("refused: " + e.getMessage());
    }
    for (final String line :
        Files.readAllLines(Paths.get("/proc/self/maps"), StandardCharsets.UTF_8)) {
      if (line.contains("rocksdb_cuckoo_loader") || line.contains("rocksdb_cuckoo_jni")) {
        System.out.println("mapped: " + line.substring(line.indexOf('/')));
      }
    }
  }
}
