// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.Filter;
import org.rocksdb.Options;

/**
 * The cuckoo filter policy for RocksJava's {@code BlockBasedTableConfig}:
 * one cuckoo filter per SST file (or filter partition), in place of
 * {@code BloomFilter}.
 *
 * <pre>{@code
 * try (CuckooFilter filter = new CuckooFilter(10);
 *      Options options = new Options().setCreateIfMissing(true)
 *          .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(filter));
 *      RocksDB db = RocksDB.open(options, path)) {
 *   ...
 * }
 * }</pre>
 *
 * <p>The first use loads the native library ({@link NativeLoader#load()}),
 * which is built for one RocksDB release and refuses any other with an
 * {@link IncompatibleRocksDBException}. As with {@code BloomFilter}, close
 * the filter when no options will be given it again: a table factory made
 * from a {@code BlockBasedTableConfig} holds its own reference to the
 * policy, so an open DB keeps it.
 */
public class CuckooFilter extends Filter {
  static {
    NativeLoader.load();
  }

  private final String id;

  /**
   * A filter of {@code bitsPerKey} bits per key on every level.
   *
   * @param bitsPerKey the space budget, from 4 to 64 bits per key
   * @throws IllegalArgumentException if the budget is out of range
   */
  public CuckooFilter(final double bitsPerKey) {
    this(bitsPerKey, "");
  }

  /**
   * A filter of {@code bitsPerKey} bits per key with the policy's further
   * options, as an OPTIONS file writes them ({@code name=value;...}), for
   * example {@code "level_budgets=monkey"}: {@code bitsPerKey} is then the
   * average over the LSM's levels, and the upper levels get more.
   *
   * @param bitsPerKey the space budget, from 4 to 64 bits per key
   * @param options the policy's options, or "" for none
   * @throws IllegalArgumentException naming an unknown, malformed or
   *     out-of-range option
   */
  public CuckooFilter(final double bitsPerKey, final String options) {
    this(newFilter(bitsPerKey, options));
  }

  private CuckooFilter(final long nativeHandle) {
    super(nativeHandle);
    this.id = idOf(nativeHandle);
  }

  /**
   * Makes {@code cuckoofilter} known to RocksDB in this process, so that
   * options strings and OPTIONS files parsed from now on can name it
   * ({@code block_based_table_factory={filter_policy=cuckoofilter:10}},
   * through {@code ColumnFamilyOptions.getColumnFamilyOptionsFromProps} or
   * {@code OptionsUtil.loadOptionsFromFile}). Calling it again does nothing.
   *
   * <p>RocksDB drops a policy it cannot create (unregistered or misspelt)
   * without an error: check the one in effect with
   * {@link #filterPolicyIdOf(ColumnFamilyOptions)}.
   *
   * @throws IncompatibleRocksDBException as {@link NativeLoader#load()}
   */
  public static void register() {
    NativeLoader.load();
  }

  /**
   * The id of the filter policy in {@code options}' block-based table, as
   * an OPTIONS file names it ({@code "cuckoofilter:10"}, or a built-in
   * policy's), or null when there is none. RocksJava's
   * {@code BlockBasedTableConfig.filterPolicy()} knows only its Bloom filter
   * and reads any other policy back as null.
   *
   * @param options open column family options
   * @return the policy's id, or null
   * @throws IllegalStateException if the options are closed
   */
  public static String filterPolicyIdOf(final ColumnFamilyOptions options) {
    NativeLoader.load();
    if (!options.isOwningHandle()) {
      throw new IllegalStateException("the ColumnFamilyOptions are closed");
    }
    return policyIdOfColumnFamilyOptions(options.getNativeHandle());
  }

  /**
   * As {@link #filterPolicyIdOf(ColumnFamilyOptions)}, for {@code Options}.
   *
   * @param options open options
   * @return the policy's id, or null
   * @throws IllegalStateException if the options are closed
   */
  public static String filterPolicyIdOf(final Options options) {
    NativeLoader.load();
    if (!options.isOwningHandle()) {
      throw new IllegalStateException("the Options are closed");
    }
    return policyIdOfOptions(options.getNativeHandle());
  }

  /** @return the policy's id, as an OPTIONS file names it: {@code "cuckoofilter:10"} */
  public String getId() {
    return id;
  }

  @Override
  public boolean equals(final Object other) {
    return other instanceof CuckooFilter && id.equals(((CuckooFilter) other).id);
  }

  @Override
  public int hashCode() {
    return id.hashCode();
  }

  @Override
  public String toString() {
    return "CuckooFilter(" + id + ")";
  }

  private static native long newFilter(double bitsPerKey, String options);

  private static native String idOf(long handle);

  private static native String policyIdOfColumnFamilyOptions(long handle);

  private static native String policyIdOfOptions(long handle);
}
