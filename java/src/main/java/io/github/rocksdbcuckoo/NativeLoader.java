// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.rocksdb.RocksDB;

/**
 * Loads the jar's native library into the process beside RocksJava's.
 *
 * <ol>
 *   <li>{@code RocksDB.loadLibrary()}: rocksdbjni's own library, as any
 *       RocksJava program loads it.</li>
 *   <li>The release check: {@code RocksDB.rocksdbVersion()} (and FRocksDB
 *       told apart from RocksDB) against {@code built-for.txt}, which the
 *       build wrote beside the native library. Anything else is refused with
 *       an {@link IncompatibleRocksDBException} naming both, before any of
 *       this jar's native code is loaded.</li>
 *   <li>{@code librocksdb_cuckoo_loader.so} (C, no RocksDB) makes the loaded
 *       librocksdbjni's symbols global: the JVM loads it locally, and the
 *       filter library binds to RocksDB's symbols as it loads.</li>
 *   <li>{@code librocksdb_cuckoo_jni.so}, the plugin built for that release,
 *       then registers {@code cuckoofilter} in RocksDB's default object
 *       library, for options strings and OPTIONS files.</li>
 * </ol>
 *
 * The libraries are copied out of the jar into a fresh temporary folder,
 * removed when the JVM exits.
 */
public final class NativeLoader {
  static final String RESOURCES = "/io/github/rocksdbcuckoo/native/";

  private static boolean loaded;
  private static RuntimeException failure;

  private NativeLoader() {}

  /**
   * Loads RocksJava's library and this jar's, once per process; later calls
   * return at once, or throw what the first threw.
   *
   * @throws IncompatibleRocksDBException if rocksdbjni is not the release
   *     this jar was built for, or does not export RocksDB's symbols
   */
  public static void load() {
    load(RESOURCES);
  }

  /** {@link #load()} from the resources under {@code root} (tests forge them). */
  static synchronized void load(final String root) {
    if (loaded) {
      return;
    }
    if (failure != null) {
      throw failure;
    }
    try {
      RocksDB.loadLibrary();
      final String platform = platform();
      check(builtFor(root + platform), running());
      final Path folder = Files.createTempDirectory("rocksdb-cuckoo");
      folder.toFile().deleteOnExit();
      System.load(extract(root + platform, "librocksdb_cuckoo_loader.so", folder));
      if (makeRocksDbJniGlobal() == null) {
        throw new IncompatibleRocksDBException(
            "cannot find the loaded librocksdbjni: no loaded library, or more than one, "
                + "defines Java_org_rocksdb_RocksDB_version");
      }
      try {
        System.load(extract(root + platform, "librocksdb_cuckoo_jni.so", folder));
      } catch (final UnsatisfiedLinkError e) {
        throw new IncompatibleRocksDBException(
            "librocksdbjni lacks a RocksDB symbol the filter needs (" + e.getMessage()
                + "): a rocksdbjni built with the other std::string ABI, or with hidden "
                + "symbols? docs/bindings.md says how to build for it",
            e);
      }
      if (!registerDefault()) {
        throw new IllegalStateException(
            "rocksdb-cuckoo: could not register cuckoofilter in RocksDB's object library");
      }
      loaded = true;
    } catch (final IOException e) {
      failure = new IllegalStateException("rocksdb-cuckoo: cannot extract its native library", e);
      throw failure;
    } catch (final RuntimeException e) {
      failure = e;
      throw e;
    }
  }

  /**
   * The RocksDB release in the process, as {@code built-for.txt} names one:
   * {@code "RocksDB 10.1.3"} or {@code "FRocksDB 8.10.0"}.
   */
  static String running() {
    String flavour = "RocksDB";
    try {
      // FRocksDB's own class; RocksDB has none by that name.
      Class.forName("org.rocksdb.FlinkCompactionFilter", false, RocksDB.class.getClassLoader());
      flavour = "FRocksDB";
    } catch (final ClassNotFoundException e) {
      // RocksDB
    }
    return flavour + " " + RocksDB.rocksdbVersion();
  }

  /** Refuses a release other than the one the native library was built for. */
  static void check(final String builtFor, final String running) {
    if (!builtFor.equals(running)) {
      throw new IncompatibleRocksDBException("rocksdb-cuckoo's native library was built for "
          + builtFor + ", but this process runs rocksdbjni of " + running
          + ": use the rocksdb-cuckoo jar built for " + running);
    }
  }

  static String platform() {
    final String os = System.getProperty("os.name");
    final String arch = System.getProperty("os.arch");
    if (os.startsWith("Linux") && (arch.equals("amd64") || arch.equals("x86_64"))) {
      return "linux-x86_64";
    }
    if (os.startsWith("Linux") && arch.equals("aarch64")) {
      return "linux-aarch64";
    }
    throw new IncompatibleRocksDBException(
        "rocksdb-cuckoo has no native library for " + os + " on " + arch);
  }

  static String builtFor(final String folder) throws IOException {
    try (InputStream in = resource(folder, "built-for.txt")) {
      return new String(readAll(in), StandardCharsets.UTF_8).trim();
    }
  }

  private static InputStream resource(final String folder, final String name) {
    final InputStream in = NativeLoader.class.getResourceAsStream(folder + "/" + name);
    if (in == null) {
      throw new IncompatibleRocksDBException("this rocksdb-cuckoo jar has no " + folder + "/" + name);
    }
    return in;
  }

  private static String extract(final String resources, final String name, final Path folder)
      throws IOException {
    final Path file = folder.resolve(name);
    try (InputStream in = resource(resources, name)) {
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
    }
    file.toFile().deleteOnExit();
    return file.toAbsolutePath().toString();
  }

  private static byte[] readAll(final InputStream in) throws IOException {
    final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    final byte[] buffer = new byte[4096];
    for (int n; (n = in.read(buffer)) > 0; ) {
      out.write(buffer, 0, n);
    }
    return out.toByteArray();
  }

  private static native String makeRocksDbJniGlobal();

  private static native boolean registerDefault();
}
