// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import static io.github.rocksdbcuckoo.TestKeys.absent;
import static io.github.rocksdbcuckoo.TestKeys.present;
import static io.github.rocksdbcuckoo.TestKeys.value;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.BeforeClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/** (d) Refusal of another release, several filters, many readers, closing. */
public class LoaderAndLifecycleTest {
  /** Resources with a built-for.txt of RocksDB 1.2.3, and no libraries. */
  static final String FORGED_ROOT = "/io/github/rocksdbcuckoo/forged/";

  @Rule public TemporaryFolder folder = new TemporaryFolder();

  @BeforeClass
  public static void load() {
    NativeLoader.load();
  }

  @Test
  public void anotherReleaseIsRefusedNamingBoth() {
    final IncompatibleRocksDBException e = assertThrows(IncompatibleRocksDBException.class,
        () -> NativeLoader.check("RocksDB 1.2.3", NativeLoader.running()));
    final String running = RocksDB.rocksdbVersion().toString();
    assertTrue(e.getMessage(), e.getMessage().contains("RocksDB 1.2.3"));
    assertTrue(e.getMessage(), e.getMessage().contains(" " + running));
    // The same numbers of the other flavour are another release.
    assertThrows(IncompatibleRocksDBException.class,
        () -> NativeLoader.check("FRocksDB " + running, "RocksDB " + running));
    NativeLoader.check(NativeLoader.running(), NativeLoader.running());
    // The refusal leaves what is loaded working.
    try (CuckooFilter filter = new CuckooFilter(10)) {
      assertEquals("cuckoofilter:10", filter.getId());
    }
  }

  /** In a fresh JVM, the refusal comes before any library of ours is mapped. */
  @Test
  public void refusalLoadsNothing() throws Exception {
    final String java = System.getProperty("java.home") + File.separator + "bin"
        + File.separator + "java";
    final Process process = new ProcessBuilder(java, "-cp",
        System.getProperty("java.class.path"), LoadAndReportMain.class.getName())
        .redirectErrorStream(true).start();
    final String output = readAll(process.getInputStream());
    assertTrue("timed out", process.waitFor(60, TimeUnit.SECONDS));
    assertEquals(output, 0, process.exitValue());
    assertTrue(output, output.startsWith("refused: "));
    assertTrue(output, output.contains("1.2.3"));
    assertFalse(output, output.contains("mapped: "));
  }

  @Test
  public void badOptionsAreIllegalArguments() {
    assertThrows(IllegalArgumentException.class, () -> new CuckooFilter(3));
    assertThrows(IllegalArgumentException.class, () -> new CuckooFilter(65));
    assertThrows(IllegalArgumentException.class, () -> new CuckooFilter(Double.NaN));
    final IllegalArgumentException monky = assertThrows(IllegalArgumentException.class,
        () -> new CuckooFilter(10, "level_budgets=monky"));
    assertTrue(monky.getMessage(), monky.getMessage().contains("monky"));
    assertThrows(IllegalArgumentException.class,
        () -> new CuckooFilter(10, "level_budgets=monkey;max_bytes_for_level_multiplier=1"));
    assertThrows(IllegalArgumentException.class, () -> new CuckooFilter(10, "no_such_option=1"));
    assertThrows(IllegalArgumentException.class, () -> new CuckooFilter(10, "bits_per_key=12"));
    try (CuckooFilter same = new CuckooFilter(10, "bits_per_key=10");
         CuckooFilter none = new CuckooFilter(10, null)) {
      assertEquals(same, none);
    }
  }

  @Test
  public void ids() {
    try (CuckooFilter plain = new CuckooFilter(10);
         CuckooFilter fraction = new CuckooFilter(9.5);
         CuckooFilter monkey = new CuckooFilter(10, "level_budgets=monkey");
         CuckooFilter monkey8 =
             new CuckooFilter(12, "level_budgets=monkey;max_bytes_for_level_multiplier=8")) {
      assertEquals("cuckoofilter:10", plain.getId());
      assertEquals("cuckoofilter:9.5", fraction.getId());
      assertEquals("cuckoofilter:10:monkey:10", monkey.getId());
      assertEquals("cuckoofilter:12:monkey:8", monkey8.getId());
      assertNotEquals(plain, monkey);
    }
  }

  /** Two cuckoo filters and a Bloom filter, three column families, one JVM. */
  @Test
  public void severalFiltersInOneProcess() throws Exception {
    final int keys = 30_000;
    final List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (CuckooFilter ten = new CuckooFilter(10);
         CuckooFilter monkey = new CuckooFilter(16,
             "level_budgets=monkey;max_bytes_for_level_multiplier=8");
         BloomFilter bloom = new BloomFilter(10);
         ColumnFamilyOptions tenOptions = new ColumnFamilyOptions()
             .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(ten));
         ColumnFamilyOptions monkeyOptions = new ColumnFamilyOptions()
             .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(monkey));
         ColumnFamilyOptions bloomOptions = new ColumnFamilyOptions()
             .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(bloom));
         DBOptions dbOptions =
             new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
         RocksDB db = RocksDB.open(dbOptions, folder.getRoot().getAbsolutePath(),
             Arrays.asList(
                 new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, tenOptions),
                 new ColumnFamilyDescriptor("monkey".getBytes(), monkeyOptions),
                 new ColumnFamilyDescriptor("bloom".getBytes(), bloomOptions)),
             handles)) {
      try {
        for (final ColumnFamilyHandle cf : handles) {
          TestKeys.put(db, cf, 0, keys);
          TestKeys.flush(db, cf);
          db.compactRange(cf);
        }
        TestKeys.assertTablesUse(db, handles.get(0), "cuckoofilter");
        TestKeys.assertTablesUse(db, handles.get(1), "cuckoofilter");
        TestKeys.assertTablesUse(db, handles.get(2), "bloomfilter");
        for (final ColumnFamilyHandle cf : handles) {
          for (int i = 0; i < keys; ++i) {
            assertArrayEquals(value(i), db.get(cf, present(i)));
            assertNull(db.get(cf, absent(i)));
          }
        }
      } finally {
        for (final ColumnFamilyHandle cf : handles) {
          cf.close();
        }
      }
    }
  }

  @Test
  public void manyThreadsRead() throws Exception {
    final int keys = 100_000;
    final int threads = 8;
    try (CuckooFilter filter = new CuckooFilter(10);
         Options options = new Options().setCreateIfMissing(true)
             .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(filter));
         RocksDB db = RocksDB.open(options, folder.getRoot().getAbsolutePath())) {
      TestKeys.put(db, null, 0, keys);
      TestKeys.flush(db, null);
      final ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        final List<Future<Integer>> results = new ArrayList<>();
        for (int t = 0; t < threads; ++t) {
          final long seed = t;
          results.add(pool.submit(() -> {
            final Random random = new Random(seed);
            int wrong = 0;
            for (int n = 0; n < 50_000; ++n) {
              final int i = random.nextInt(keys);
              if (!Arrays.equals(value(i), db.get(present(i))) || db.get(absent(i)) != null) {
                ++wrong;
              }
            }
            return wrong;
          }));
        }
        // A compaction while they read: new filters built, old readers dropped.
        db.compactRange();
        for (final Future<Integer> result : results) {
          assertEquals(Integer.valueOf(0), result.get(5, TimeUnit.MINUTES));
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /**
   * The C++ policy is shared: the table factory holds its own reference, so
   * closing the Java filter while the DB is open is safe, and later flushes
   * still build cuckoo filters. Closing twice does nothing.
   */
  @Test
  public void closingTheFilterEarlyIsSafe() throws Exception {
    final CuckooFilter filter = new CuckooFilter(10);
    try (Options options = new Options().setCreateIfMissing(true)
             .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(filter));
         RocksDB db = RocksDB.open(options, folder.getRoot().getAbsolutePath())) {
      filter.close();
      filter.close();
      assertFalse(filter.isOwningHandle());
      assertEquals("cuckoofilter:10", filter.getId());  // kept on the Java side

      TestKeys.put(db, null, 0, 10_000);
      TestKeys.flush(db, null);
      TestKeys.assertTablesUse(db, null, "cuckoofilter");
      assertEquals("cuckoofilter:10", CuckooFilter.filterPolicyIdOf(options));
      for (int i = 0; i < 10_000; ++i) {
        assertArrayEquals(value(i), db.get(present(i)));
      }
    }
    final Options closed = new Options();
    closed.close();
    assertThrows(IllegalStateException.class, () -> CuckooFilter.filterPolicyIdOf(closed));
  }

  /** Many filters made and closed in turn, every budget in range: no crash, no leak to see. */
  @Test
  public void manyFiltersComeAndGo() {
    for (int i = 0; i < 10_000; ++i) {
      try (CuckooFilter filter = new CuckooFilter(4 + i % 60)) {
        if (!filter.getId().startsWith("cuckoofilter:")) {
          fail(filter.getId());
        }
      }
    }
  }

  private static String readAll(final InputStream in) throws Exception {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final byte[] buffer = new byte[4096];
    for (int n; (n = in.read(buffer)) > 0;) {
      out.write(buffer, 0, n);
    }
    return new String(out.toByteArray(), StandardCharsets.UTF_8);
  }
}
