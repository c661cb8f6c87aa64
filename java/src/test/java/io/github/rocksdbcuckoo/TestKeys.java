// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.TableProperties;

/**
 * Keys of the tests: the stored keys are the even numbers in [0, 2n), the
 * absent ones the odd numbers, so that every absent key falls inside some
 * file's key range and its filter is consulted.
 */
final class TestKeys {
  private TestKeys() {}

  static byte[] key(final long i) {
    return String.format("key%012d", i).getBytes(StandardCharsets.US_ASCII);
  }

  static byte[] present(final int i) {
    return key(2L * i);
  }

  static byte[] absent(final int i) {
    return key(2L * i + 1);
  }

  static byte[] value(final int i) {
    return ("value-" + i).getBytes(StandardCharsets.US_ASCII);
  }

  static void put(final RocksDB db, final ColumnFamilyHandle cf, final int from, final int to)
      throws RocksDBException {
    for (int i = from; i < to; ++i) {
      if (cf == null) {
        db.put(present(i), value(i));
      } else {
        db.put(cf, present(i), value(i));
      }
    }
  }

  static void flush(final RocksDB db, final ColumnFamilyHandle cf) throws RocksDBException {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      if (cf == null) {
        db.flush(flush);
      } else {
        db.flush(flush, cf);
      }
    }
  }

  /**
   * Asserts that every SST file of the column family was written with
   * {@code policyName} and has a filter block, and returns the filters'
   * bits per key.
   */
  static double assertTablesUse(final RocksDB db, final ColumnFamilyHandle cf,
      final String policyName) throws RocksDBException {
    final Map<String, TableProperties> tables =
        cf == null ? db.getPropertiesOfAllTables() : db.getPropertiesOfAllTables(cf);
    assertFalse("no SST files", tables.isEmpty());
    long filterBytes = 0;
    long entries = 0;
    for (final Map.Entry<String, TableProperties> table : tables.entrySet()) {
      assertEquals(table.getKey(), policyName, table.getValue().getFilterPolicyName());
      assertTrue(table.getKey() + " has no filter block", table.getValue().getFilterSize() > 0);
      filterBytes += table.getValue().getFilterSize();
      entries += table.getValue().getNumEntries();
    }
    return 8.0 * filterBytes / entries;
  }
}
