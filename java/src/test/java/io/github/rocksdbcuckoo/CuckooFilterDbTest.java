// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import static io.github.rocksdbcuckoo.TestKeys.absent;
import static io.github.rocksdbcuckoo.TestKeys.present;
import static io.github.rocksdbcuckoo.TestKeys.value;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.BeforeClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;

/** (a) A DB with new CuckooFilter(10): no false negatives, absent keys filtered, reopen. */
public class CuckooFilterDbTest {
  static final int KEYS = 100_000;
  static final int BATCH = 1_000;

  @Rule public TemporaryFolder folder = new TemporaryFolder();

  @BeforeClass
  public static void load() {
    NativeLoader.load();
  }

  @Test
  public void noFalseNegativesThroughFlushCompactionAndReopen() throws Exception {
    final String path = folder.getRoot().getAbsolutePath();
    try (CuckooFilter filter = new CuckooFilter(10);
         Statistics statistics = new Statistics();
         Options options = new Options()
             .setCreateIfMissing(true)
             .setStatistics(statistics)
             .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(filter))) {
      assertEquals("cuckoofilter:10", CuckooFilter.filterPolicyIdOf(options));
      try (RocksDB db = RocksDB.open(options, path)) {
        // Two L0 files, each consulted for every key in its range.
        TestKeys.put(db, null, 0, KEYS / 2);
        TestKeys.flush(db, null);
        TestKeys.put(db, null, KEYS / 2, KEYS);
        TestKeys.flush(db, null);
        checkReads(db, statistics, "after two flushes");

        db.compactRange();
        checkReads(db, statistics, "after a full compaction");
        final double bitsPerKey = TestKeys.assertTablesUse(db, null, "cuckoofilter");
        // 10 bits per key, rounded to the allocator's size classes
        // (optimize_filters_for_memory) and with each block's header.
        assertTrue("filter bits per key " + bitsPerKey, bitsPerKey > 7 && bitsPerKey < 14.5);
        assertTrue(db.getProperty("rocksdb.aggregated-table-properties")
            .contains("filter block size"));
      }
      try (RocksDB db = RocksDB.open(options, path)) {
        checkReads(db, statistics, "after reopening");
      }
    }
  }

  /**
   * Every stored key is found by get and by multiGetAsList, no absent key
   * is, and the filters rule out almost all absent keys before any data
   * block is read: BLOOM_FILTER_USEFUL counts, for every filter of every
   * policy, the lookups it answered "no" to (MultiGet counts its batch's).
   */
  static void checkReads(final RocksDB db, final Statistics statistics, final String when)
      throws RocksDBException {
    int falseNegatives = 0;
    for (int i = 0; i < KEYS; ++i) {
      final byte[] got = db.get(present(i));
      if (got == null) {
        ++falseNegatives;
      } else {
        assertArrayEquals(when, value(i), got);
      }
    }
    assertEquals(when + ": keys not found by get", 0, falseNegatives);

    for (int start = 0; start < KEYS; start += BATCH) {
      final List<byte[]> keys = new ArrayList<>(BATCH);
      for (int i = start; i < start + BATCH; ++i) {
        keys.add(present(i));
      }
      final List<byte[]> values = db.multiGetAsList(keys);
      for (int i = 0; i < BATCH; ++i) {
        if (values.get(i) == null) {
          ++falseNegatives;
        }
      }
    }
    assertEquals(when + ": keys not found by multiGetAsList", 0, falseNegatives);

    long before = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
    for (int i = 0; i < KEYS; ++i) {
      assertNull(when, db.get(absent(i)));
    }
    final long usefulOnGet = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL) - before;
    // At most about 0.7% of absent keys pass a 10-bit cuckoo filter; allow
    // 3% before calling the filter broken (or absent).
    assertTrue(when + ": get: " + usefulOnGet + " of " + KEYS + " absent keys filtered",
        usefulOnGet >= KEYS * 97L / 100);

    before = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
    for (int start = 0; start < KEYS; start += BATCH) {
      final List<byte[]> keys = new ArrayList<>(BATCH);
      for (int i = start; i < start + BATCH; ++i) {
        keys.add(absent(i));
      }
      for (final byte[] got : db.multiGetAsList(keys)) {
        assertNull(when, got);
      }
    }
    final long usefulOnMultiGet =
        statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL) - before;
    assertTrue(when + ": multiGet: " + usefulOnMultiGet + " of " + KEYS + " absent keys filtered",
        usefulOnMultiGet >= KEYS * 97L / 100);
  }
}
