// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo.bench;

import io.github.rocksdbcuckoo.CuckooFilter;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
 * absent-key and present-key Get throughput (gets per second of the
 * measuring thread's CPU time) and the filters' bytes (table
 * properties). Two DBs with the same keys, each compacted to one level and
 * held in a block cache large enough for all of it, so that the figures are
 * the read path's CPU cost, the filter's included. Each repetition measures
 * both DBs, in alternating order, on the same lookup keys; the ratios
 * cuckoo/bloom are summarised by their median and a distribution-free
 * interval for it (order statistics of the repetitions).
 *
 * <pre>
 * java -cp ... io.github.rocksdbcuckoo.bench.FilterBench [--keys 1000000]
 *     [--lookups 500000] [--reps 9] [--bits 10] [--dir /tmp] [--control]
 * </pre>
 */
public final class FilterBench {
  /** Each measurement is the calling thread's CPU time: the JIT's and the GC's are not in it. */
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private FilterBench() {}

  public static void main(final String[] args) throws Exception {
    int keys = 1_000_000;
    int lookups = 500_000;
    int reps = 9;
    double bits = 10;
    boolean control = false;
    String dir = System.getProperty("java.io.tmpdir");
    for (int i = 0; i < args.length; ++i) {
      if (args[i].equals("--control")) {
        control = true;
        continue;
      }
      final String value = ++i < args.length ? args[i] : usage("missing value");
      switch (args[i - 1]) {
        case "--keys": keys = Integer.parseInt(value); break;
        case "--lookups": lookups = Integer.parseInt(value); break;
        case "--reps": reps = Integer.parseInt(value); break;
        case "--bits": bits = Double.parseDouble(value); break;
        case "--dir": dir = value; break;
        default: usage("unknown " + args[i - 1]);
      }
    }
    RocksDB.loadLibrary();
    final Path root = Files.createTempDirectory(new File(dir).toPath(), "filter-bench");
    // With --control both DBs have a BloomFilter: the ratios then measure
    // what differs between the two DBs besides their filters (an A/A test).
    final String firstName = control ? "bloom A" : "cuckoo";
    final String secondName = control ? "bloom B" : "bloom";
    boolean lost;
    try (Db cuckoo = new Db(firstName,
             control ? new BloomFilter(bits) : new CuckooFilter(bits), root, keys);
         Db bloom = new Db(secondName, new BloomFilter(bits), root, keys)) {
      System.out.printf("RocksDB %s (rocksdbjni), %,d keys, %,d lookups a measurement, %.3g"
          + " bits/key%s%n%n", RocksDB.rocksdbVersion(), keys, lookups, bits,
          control ? "; control run: Bloom against Bloom" : "");

      // Warm-up: fill the block cache and let the JIT settle.
      final byte[][] warm = lookupKeys(keys, lookups, true, -1);
      cuckoo.gets(warm);
      bloom.gets(warm);
      cuckoo.gets(lookupKeys(keys, lookups, false, -2));
      bloom.gets(lookupKeys(keys, lookups, false, -2));

      final double[][] absentRates = new double[2][reps];
      final double[][] presentRates = new double[2][reps];
      final double[] absentRatios = new double[reps];
      final double[] presentRatios = new double[reps];
      for (int rep = 0; rep < reps; ++rep) {
        final byte[][] absent = lookupKeys(keys, lookups, true, rep);
        final byte[][] present = lookupKeys(keys, lookups, false, rep);
        final int first = rep % 2;  // alternating order
        final Db[] dbs = {cuckoo, bloom};
        for (final int i : new int[] {first, 1 - first}) {
          absentRates[i][rep] = dbs[i].measureAbsent(absent);
        }
        for (final int i : new int[] {first, 1 - first}) {
          presentRates[i][rep] = dbs[i].measurePresent(present);
        }
        absentRatios[rep] = absentRates[0][rep] / absentRates[1][rep];
        presentRatios[rep] = presentRates[0][rep] / presentRates[1][rep];
        System.err.printf("  rep %d: absent %.0f vs %.0f gets/s, present %.0f vs %.0f gets/s"
            + " of CPU time (%s vs %s)%n", rep + 1, absentRates[0][rep], absentRates[1][rep],
            presentRates[0][rep], presentRates[1][rep], firstName, secondName);
      }

      System.out.printf("| | %s | %s | %s / %s |%n|---|---|---|---|%n", firstName, secondName,
          firstName, secondName);
      System.out.printf("| filter bytes (bits/key) | %,d (%.2f) | %,d (%.2f) | %.3f |%n",
          cuckoo.filterBytes, 8.0 * cuckoo.filterBytes / cuckoo.entries, bloom.filterBytes,
          8.0 * bloom.filterBytes / bloom.entries,
          (double) cuckoo.filterBytes / bloom.filterBytes);
      System.out.printf("| false positives per absent Get | %.4f%% | %.4f%% | %.3f |%n",
          100 * cuckoo.falsePositiveRate(), 100 * bloom.falsePositiveRate(),
          cuckoo.falsePositiveRate() / bloom.falsePositiveRate());
      System.out.printf("| stored keys not found (false negatives) | %d | %d | |%n",
          cuckoo.presentMissing, bloom.presentMissing);
      System.out.printf("| absent-key Gets per CPU second | %,.0f | %,.0f | %s |%n",
          median(absentRates[0]), median(absentRates[1]), summary(absentRatios));
      System.out.printf("| present-key Gets per CPU second | %,.0f | %,.0f | %s |%n",
          median(presentRates[0]), median(presentRates[1]), summary(presentRatios));
      System.out.printf("%nMedians of %d paired repetitions (alternating order, the measuring"
          + " thread's CPU time), with %s.%n", reps, coverageText(reps));
      lost = cuckoo.presentMissing + bloom.presentMissing != 0;
    } finally {
      deleteTree(root.toFile());
    }
    if (lost) {
      System.exit(1);
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
    long presentMissing;  // stored keys a Get did not find: false negatives

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
      final long start = THREADS.getCurrentThreadCpuTime();
      final int found = gets(keys);
      final long elapsed = THREADS.getCurrentThreadCpuTime() - start;
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
      final long start = THREADS.getCurrentThreadCpuTime();
      final int found = gets(keys);
      final long elapsed = THREADS.getCurrentThreadCpuTime() - start;
      presentMissing += keys.length - found;
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

  static double median(final double[] values) {
    final double[] sorted = values.clone();
    Arrays.sort(sorted);
    final int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /**
   * The order statistic k of the widest-coverage interval [x(k), x(n+1-k)]
   * for the median whose coverage is at least 95% (1, [min, max], when n is
   * too small for that).
   */
  static int intervalRank(final int n) {
    int k = 1;
    double tail = Math.pow(0.5, n);  // P(Binomial(n, 1/2) <= k - 1)
    for (int next = 2; next <= n / 2; ++next) {
      final double nextTail = tail + binomial(n, next - 1) * Math.pow(0.5, n);
      if (1 - 2 * nextTail < 0.95) {
        break;
      }
      k = next;
      tail = nextTail;
    }
    return k;
  }

  static String coverageText(final int n) {
    final int k = intervalRank(n);
    double tail = 0;
    for (int j = 0; j < k; ++j) {
      tail += binomial(n, j) * Math.pow(0.5, n);
    }
    final String rank = k == 1 ? "" : k == 2 ? "second " : k == 3 ? "third " : k + "th ";
    return String.format("the repetitions' %ssmallest and %slargest ratios as a %.1f%%"
        + " distribution-free interval for the median ratio", rank, rank, 100 * (1 - 2 * tail));
  }

  /** The median of {@code ratios} and its interval (intervalRank). */
  static String summary(final double[] ratios) {
    final double[] sorted = ratios.clone();
    Arrays.sort(sorted);
    final int k = intervalRank(sorted.length);
    return String.format("%.3fx [%.3f, %.3f]", median(ratios), sorted[k - 1],
        sorted[sorted.length - k]);
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
        + " [--bits B] [--dir D] [--control]");
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
