// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import static io.github.rocksdbcuckoo.TestKeys.absent;
import static io.github.rocksdbcuckoo.TestKeys.present;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.junit.BeforeClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Env;
import org.rocksdb.OptionsUtil;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.TableFormatConfig;

/**
 * (b) The policy by name: an options string through
 * getColumnFamilyOptionsFromProps and an OPTIONS file through
 * OptionsUtil.loadOptionsFromFile, parsed with strict ConfigOptions, and what
 * RocksJava gives back when the config is read.
 */
public class OptionsRoutesTest {
  static final int KEYS = 20_000;

  @Rule public TemporaryFolder folder = new TemporaryFolder();

  @BeforeClass
  public static void register() {
    CuckooFilter.register();
  }

  static ConfigOptions strict() {
    return new ConfigOptions().setIgnoreUnknownOptions(false).setInputStringsEscaped(false);
  }

  static Properties tableProperties(final String table) {
    final Properties properties = new Properties();
    properties.setProperty("block_based_table_factory", table);
    return properties;
  }

  @Test
  public void optionsStringNamesThePolicy() throws Exception {
    try (ConfigOptions config = strict();
         ColumnFamilyOptions cf = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(
             config, tableProperties("{filter_policy=cuckoofilter:10}"))) {
      assertNotNull("RocksDB rejected the options string", cf);
      // RocksJava does not read the table config back on this route...
      assertNull(cf.tableFormatConfig());
      // ... so the policy in effect is read through the binding.
      assertEquals("cuckoofilter:10", CuckooFilter.filterPolicyIdOf(cf));
      writeFlushAndCheck(cf, "cuckoofilter");
    }
  }

  @Test
  public void optionsStringWithLevelBudgets() throws Exception {
    try (ConfigOptions config = strict();
         ColumnFamilyOptions cf = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(config,
             tableProperties("{filter_policy={id=cuckoofilter;bits_per_key=12;"
                 + "level_budgets=monkey;max_bytes_for_level_multiplier=8}}"))) {
      assertNotNull("RocksDB rejected the options string", cf);
      assertEquals("cuckoofilter:12:monkey:8", CuckooFilter.filterPolicyIdOf(cf));
    }
  }

  /**
   * A policy RocksDB cannot create (misspelt here; the same for cuckoofilter
   * before register()) is dropped without an error even with
   * setIgnoreUnknownOptions(false): the C++ ConfigOptions'
   * ignore_unsupported_options is true, and RocksJava has no setter for it.
   * The DB then runs without a filter. Hence filterPolicyIdOf.
   */
  @Test
  public void unknownPolicyIsDroppedSilently() throws Exception {
    try (ConfigOptions config = strict();
         ColumnFamilyOptions cf = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(
             config, tableProperties("{filter_policy=cukoofilter:10}"))) {
      assertNotNull(cf);
      assertNull(CuckooFilter.filterPolicyIdOf(cf));
    }
  }

  /** An out-of-range budget fails the parse; RocksJava says so with null, not an exception. */
  @Test
  public void invalidBudgetIsRejected() {
    try (ConfigOptions config = strict()) {
      assertNull(ColumnFamilyOptions.getColumnFamilyOptionsFromProps(
          config, tableProperties("{filter_policy=cuckoofilter:100}")));
      assertNull(ColumnFamilyOptions.getColumnFamilyOptionsFromProps(
          config, tableProperties("{filter_policy=cuckoofilter:10:monky}")));
    }
  }

  @Test
  public void optionsFileNamesThePolicy() throws Exception {
    final File file = folder.newFile("OPTIONS-handwritten");
    Files.write(file.toPath(), Arrays.asList(
        "[Version]",
        "  rocksdb_version=" + RocksDB.rocksdbVersion(),
        "  options_file_version=1.1",
        "",
        "[DBOptions]",
        "  create_if_missing=true",
        "",
        "[CFOptions \"default\"]",
        "",
        "[TableOptions/BlockBasedTable \"default\"]",
        "  filter_policy=cuckoofilter:10:monkey:10",
        ""), StandardCharsets.US_ASCII);

    final List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    try (ConfigOptions config = new ConfigOptions().setIgnoreUnknownOptions(false);
         DBOptions dbOptions = new DBOptions()) {
      OptionsUtil.loadOptionsFromFile(config, file.getAbsolutePath(), dbOptions, descriptors);
      try {
        assertEquals(1, descriptors.size());
        final ColumnFamilyOptions cf = descriptors.get(0).getOptions();
        // Read back, the table config is there, but RocksJava knows only
        // its own Bloom filter: any other policy reads as null.
        final TableFormatConfig table = cf.tableFormatConfig();
        assertTrue(table instanceof BlockBasedTableConfig);
        assertNull(((BlockBasedTableConfig) table).filterPolicy());
        assertEquals("cuckoofilter:10:monkey:10", CuckooFilter.filterPolicyIdOf(cf));

        final String path = folder.newFolder("db-from-file").getAbsolutePath();
        writeFlushAndCheck(dbOptions, cf, path, "cuckoofilter");

        // The OPTIONS file the DB wrote names the policy, and loads back.
        final String written = OptionsUtil.getLatestOptionsFileName(path, Env.getDefault());
        final String text = new String(
            Files.readAllBytes(new File(path, written).toPath()), StandardCharsets.UTF_8);
        assertTrue(text, text.contains("cuckoofilter"));
        final List<ColumnFamilyDescriptor> again = new ArrayList<>();
        try (DBOptions dbAgain = new DBOptions()) {
          OptionsUtil.loadLatestOptions(config, path, dbAgain, again);
          try {
            assertEquals("cuckoofilter:10:monkey:10",
                CuckooFilter.filterPolicyIdOf(again.get(0).getOptions()));
          } finally {
            closeAll(again);
          }
        }
      } finally {
        closeAll(descriptors);
      }
    }
  }

  /**
   * The trap in reading back: handing the fetched table config to
   * setTableFormatConfig again rebuilds the table factory from the Java
   * object, whose filter is null, and the policy is gone. Set the filter
   * on it first.
   */
  @Test
  public void reapplyingAFetchedTableConfigDropsThePolicy() throws Exception {
    final File file = folder.newFile("OPTIONS-reapply");
    Files.write(file.toPath(), Arrays.asList(
        "[Version]", "  rocksdb_version=" + RocksDB.rocksdbVersion(),
        "  options_file_version=1.1", "", "[DBOptions]", "",
        "[CFOptions \"default\"]", "",
        "[TableOptions/BlockBasedTable \"default\"]", "  filter_policy=cuckoofilter:10", ""),
        StandardCharsets.US_ASCII);
    final List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    try (ConfigOptions config = new ConfigOptions().setIgnoreUnknownOptions(false);
         DBOptions dbOptions = new DBOptions();
         CuckooFilter filter = new CuckooFilter(10)) {
      OptionsUtil.loadOptionsFromFile(config, file.getAbsolutePath(), dbOptions, descriptors);
      try {
        final ColumnFamilyOptions cf = descriptors.get(0).getOptions();
        final BlockBasedTableConfig table = (BlockBasedTableConfig) cf.tableFormatConfig();
        cf.setTableFormatConfig(table);
        assertNull(CuckooFilter.filterPolicyIdOf(cf));

        cf.setTableFormatConfig(table.setFilterPolicy(filter));
        assertEquals("cuckoofilter:10", CuckooFilter.filterPolicyIdOf(cf));
      } finally {
        closeAll(descriptors);
      }
    }
  }

  private static void writeFlushAndCheck(final ColumnFamilyOptions cf, final String policyName)
      throws Exception {
    try (DBOptions dbOptions = new DBOptions()) {
      writeFlushAndCheck(dbOptions, cf, Files.createTempDirectory("cuckoo-props").toString(),
          policyName);
    }
  }

  private static void writeFlushAndCheck(final DBOptions dbOptions, final ColumnFamilyOptions cf,
      final String path, final String policyName) throws RocksDBException {
    dbOptions.setCreateIfMissing(true);
    final List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (RocksDB db = RocksDB.open(dbOptions, path,
             Arrays.asList(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cf)),
             handles)) {
      try {
        TestKeys.put(db, null, 0, KEYS);
        TestKeys.flush(db, null);
        TestKeys.assertTablesUse(db, null, policyName);
        for (int i = 0; i < KEYS; ++i) {
          assertNotNull(db.get(present(i)));
          assertNull(db.get(absent(i)));
        }
      } finally {
        for (final ColumnFamilyHandle handle : handles) {
          handle.close();
        }
      }
    }
  }

  private static void closeAll(final List<ColumnFamilyDescriptor> descriptors) {
    for (final ColumnFamilyDescriptor descriptor : descriptors) {
      descriptor.getOptions().close();
    }
  }
}
