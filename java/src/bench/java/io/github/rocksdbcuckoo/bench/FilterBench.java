// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo.bench;

import io.github.rocksdbcuckoo.CuckooFilter;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Filter;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Statistics;
import org.rocksdb.TableProperties;
import org.rocksdb.TickerType;

/**
 * CuckooFilter against BloomFilter at the same bits per key, in one JVM:
 * absent-key and present-key Get throughput and the filters' bytes (table
 * properties). Two DBs with the same keys, each compacted to one level and
 * held in a block cache large enough for all of it, so that the figures are
 * the read path's CPU cost, the filter's included. Each repetition measures
 * both DBs, in alternating order, on the same lookup keys; the ratios
 * cuckoo/bloom are summarised by their median and a distribution-free
 * interval for it (order statistics of the repetitions).
 *
 * <pre>
 * java -cp ... io.github.rocksdbcuckoo.bench.FilterBench [--keys 1000000]
 *     [--lookups 500000] [--reps 9] [--bits 10] [--dir /tmp]
 * </pre>
 */
public final class FilterBench {
  private FilterBench() {}

  public static void main(final String[] args) throws Exception {
    int keys = 1_000_000;
    int lookups = 500_000;
    int reps = 9;
    double bits = 10;
    String dir = System.getProperty("java.io.tmpdir");
    for (int i = 0; i < args.length; i += 2) {
      final String value = i + 1 < args.length ? args[i + 1] : usage("missing value");
      switch (args[i]) {
        case "--keys": keys = Integer.parseInt(value); break;
        case "--lookups": lookups = Integer.parseInt(value); break;
        case "--reps": reps = Integer.parseInt(value); break;
        case "--bits": bits = Double.parseDouble(value); break;
        case "--dir": dir = value; break;
        default: usage("unknown " + args[i]);
      }
    }
    RocksDB.loadLibrary();
    final Path root = Files.createTempDirectory(new File(dir).toPath(), "filter-bench");
    try (Db cuckoo = new Db("cuckoo", new CuckooFilter(bits), root, keys);
         Db bloom = new Db("bloom", new BloomFilter(bits), root, keys)) {
      System.out.printf("RocksDB %s, %d keys, %d lookups a measurement, %d repetitions, "
          + "%.3g bits/key%n", RocksDB.rocksdbVersion(), keys, lookups, reps, bits);
      for (final Db db : new Db[] {cuckoo, bloom}) {
        System.out.printf("  %-6s filter %,d bytes = %.2f bits/key over %d files%n",
            db.name, db.filterBytes, 8.0 * db.filterBytes / db.entries, db.files);
      }

      // Warm-up: fill the block cache and let the JIT settle.
      final byte[][] warm = lookupKeys(keys, lookups, true, -1);
      cuckoo.gets(warm);
      bloom.gets(warm);
      cuckoo.gets(lookupKeys(keys, lookups, false, -2));
      bloom.gets(lookupKeys(keys, lookups, false, -2));

      final double[] absentRatios = new double[reps];
      final double[] presentRatios = new double[reps];
      for (int rep = 0; rep < reps; ++rep) {
        final byte[][] absent = lookupKeys(keys, lookups, true, rep);
        final byte[][] present = lookupKeys(keys, lookups, false, rep);
        final Db first = rep % 2 == 0 ? cuckoo : bloom;
        final Db second = first == cuckoo ? bloom : cuckoo;
        final double[] absentRate = new double[2];
        final double[] presentRate = new double[2];
        absentRate[first == cuckoo ? 0 : 1] = first.measureAbsent(absent);
        absentRate[second == cuckoo ? 0 : 1] = second.measureAbsent(absent);
        presentRate[first == cuckoo ? 0 : 1] = first.measurePresent(present);
        presentRate[second == cuckoo ? 0 : 1] = second.measurePresent(present);
        absentRatios[rep] = absentRate[0] / absentRate[1];
        presentRatios[rep] = presentRate[0] / presentRate[1];
        System.out.printf("  rep %d: absent %.0f vs %.0f gets/s, present %.0f vs %.0f gets/s"
            + " (cuckoo vs bloom)%n", rep + 1, absentRate[0], absentRate[1], presentRate[0],
            presentRate[1]);
      }

      System.out.printf("false-positive rate on absent keys: cuckoo %.4f%%, bloom %.4f%%%n",
          100 * cuckoo.falsePositiveRate(), 100 * bloom.falsePositiveRate());
      System.out.println(summary("absent-key get throughput, cuckoo/bloom", absentRatios));
      System.out.println(summary("present-key get throughput, cuckoo/bloom", presentRatios));
      System.out.printf("filter bytes, cuckoo/bloom: %.3f%n",
          (double) cuckoo.filterBytes / bloom.filterBytes);
    } finally {
      deleteTree(root.toFile());
    }
  }

  /** One DB: the keys, flushed and compacted, its filter and statistics. */
  static final class Db implements AutoCloseable {
    final String name;
    final Filter filter;
    final Statistics statistics = new Statistics();
    final LRUCache cache = new LRUCache(1L << 30);
    final Options options;
    final RocksDB db;
    final long filterBytes;
    final long entries;
    final int files;
    long absentLookups;
    long absentUseful;
    long absentPositive;

    Db(final String name, final Filter filter, final Path root, final int keys)
        throws RocksDBException {
      this.name = name;
      this.filter = filter;
      options = new Options().setCreateIfMissing(true).setStatistics(statistics)
          .setTableFormatConfig(new BlockBasedTableConfig()
              .setFilterPolicy(filter).setBlockCache(cache));
      db = RocksDB.open(options, root.resolve(name).toString());
      for (int i = 0; i < keys; ++i) {
        db.put(key(2L * i), ("value-" + i).getBytes(StandardCharsets.US_ASCII));
      }
      try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
        db.flush(flush);
      }
      db.compactRange();
      long bytes = 0;
      long count = 0;
      final Map<String, TableProperties> tables = db.getPropertiesOfAllTables();
      for (final TableProperties table : tables.values()) {
        bytes += table.getFilterSize();
        count += table.getNumEntries();
      }
      filterBytes = bytes;
      entries = count;
      files = tables.size();
    }

    int gets(final byte[][] keys) throws RocksDBException {
      int found = 0;
      for (final byte[] key : keys) {
        if (db.get(key) != null) {
          ++found;
        }
      }
      return found;
    }

    double measureAbsent(final byte[][] keys) throws RocksDBException {
      final long useful = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
      final long positive = statistics.getTickerCount(TickerType.BLOOM_FILTER_FULL_POSITIVE);
      final long start = System.nanoTime();
      final int found = gets(keys);
      final long elapsed = System.nanoTime() - start;
      if (found != 0) {
        throw new IllegalStateException(name + ": found " + found + " absent keys");
      }
      absentLookups += keys.length;
      absentUseful += statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL) - useful;
      absentPositive +=
          statistics.getTickerCount(TickerType.BLOOM_FILTER_FULL_POSITIVE) - positive;
      return keys.length * 1e9 / elapsed;
    }

    double measurePresent(final byte[][] keys) throws RocksDBException {
      final long start = System.nanoTime();
      final int found = gets(keys);
      final long elapsed = System.nanoTime() - start;
      if (found != keys.length) {
        throw new IllegalStateException(name + ": " + (keys.length - found) + " keys missing");
      }
      return keys.length * 1e9 / elapsed;
    }

    /** Of the filter checks of absent keys, the share that said "may match". */
    double falsePositiveRate() {
      return (double) absentPositive / (absentUseful + absentPositive);
    }

    @Override
    public void close() {
      db.close();
      options.close();
      filter.close();
      cache.close();
      statistics.close();
    }
  }

  static byte[] key(final long i) {
    return String.format("key%012d", i).getBytes(StandardCharsets.US_ASCII);
  }

  /** The same keys for both DBs of a repetition: absent ones are odd. */
  static byte[][] lookupKeys(final int keys, final int lookups, final boolean absent,
      final long seed) {
    final Random random = new Random(seed * 2 + (absent ? 1 : 0));
    final byte[][] result = new byte[lookups][];
    for (int n = 0; n < lookups; ++n) {
      // Absent keys below the last stored key, so that a file is consulted.
      final long i = random.nextInt(absent ? keys - 1 : keys);
      result[n] = key(2 * i + (absent ? 1 : 0));
    }
    return result;
  }

  /**
   * The median of {@code ratios} with the widest-coverage order-statistic
   * interval [x(k), x(n+1-k)] whose coverage is at least 95% (or [min, max]
   * when n is too small for that, with its coverage).
   */
  static String summary(final String what, final double[] ratios) {
    final double[] sorted = ratios.clone();
    Arrays.sort(sorted);
    final int n = sorted.length;
    final double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    // P(Binomial(n, 1/2) <= j) for j = 0, 1, ...
    int k = 1;
    double tail = Math.pow(0.5, n);  // P(X <= k - 1) for k = 1
    double coverage = 1 - 2 * tail;
    for (int next = 2; next <= n / 2; ++next) {
      final double nextTail = tail + binomial(n, next - 1) * Math.pow(0.5, n);
      if (1 - 2 * nextTail < 0.95) {
        break;
      }
      k = next;
      tail = nextTail;
      coverage = 1 - 2 * nextTail;
    }
    return String.format("%s: median %.3fx [%.3f, %.3f] (%d paired repetitions, %.1f%% "
        + "distribution-free interval)", what, median, sorted[k - 1], sorted[n - k], n,
        100 * coverage);
  }

  private static double binomial(final int n, final int k) {
    double result = 1;
    for (int i = 1; i <= k; ++i) {
      result = result * (n - k + i) / i;
    }
    return result;
  }

  private static String usage(final String problem) {
    System.err.println(problem + "\nusage: FilterBench [--keys N] [--lookups N] [--reps N]"
        + " [--bits B] [--dir D]");
    System.exit(2);
    return null;
  }

  private static void deleteTree(final File file) throws IOException {
    final File[] children = file.listFiles();
    if (children != null) {
      for (final File child : children) {
        deleteTree(child);
      }
    }
    Files.deleteIfExists(file.toPath());
  }
}
