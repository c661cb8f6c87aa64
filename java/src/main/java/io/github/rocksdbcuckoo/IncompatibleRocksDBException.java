// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

/**
 * The rocksdbjni in the process is not the RocksDB release that this jar's
 * native library was built for, or cannot lend it RocksDB's symbols. Thrown
 * before the native library is loaded: a library built for another release
 * would bind to functions and object layouts it does not know, and crash the
 * JVM instead.
 */
public class IncompatibleRocksDBException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  IncompatibleRocksDBException(final String message) {
    super(message);
  }

  IncompatibleRocksDBException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
