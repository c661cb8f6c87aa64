// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import static io.github.rocksdbcuckoo.TestKeys.absent;
import static io.github.rocksdbcuckoo.TestKeys.present;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;

import io.github.rocksdbcuckoo.examples.CuckooConfigSetter;
import io.github.rocksdbcuckoo.examples.CuckooOptionsFactory;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import org.apache.flink.state.rocksdb.RocksDBOptionsFactory;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
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
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * (c) The README's Kafka Streams config setter and Flink options factory,
 * driven the way those frameworks drive them.
 */
public class FrameworkAdaptersTest {
  static final int KEYS = 20_000;

  @Rule public TemporaryFolder folder = new TemporaryFolder();

  @BeforeClass
  public static void load() {
    NativeLoader.load();
  }

  /** Kafka's RocksDBStore hands the setter its own table config subclass. */
  static final class KafkaTableConfig extends BlockBasedTableConfig {}

  @Test
  public void kafkaStreamsConfigSetter() throws Exception {
    // As RocksDBStore.openDB: its table config with a BloomFilter, then the
    // user's setter, then a check that the table config is still its object.
    try (Options options = new Options();
         BloomFilter kafkaFilter = new BloomFilter()) {
      final KafkaTableConfig kafkaTable = new KafkaTableConfig();
      kafkaTable.setFilterPolicy(kafkaFilter);
      options.setTableFormatConfig(kafkaTable);
      options.setCreateIfMissing(true);

      final RocksDBConfigSetter setter = new CuckooConfigSetter();
      setter.setConfig("store-1", options, Collections.<String, Object>emptyMap());
      assertSame(kafkaTable, options.tableFormatConfig());
      assertEquals("cuckoofilter:10", CuckooFilter.filterPolicyIdOf(options));

      try (RocksDB db = RocksDB.open(options, folder.newFolder("kafka").getAbsolutePath())) {
        TestKeys.put(db, null, 0, KEYS);
        TestKeys.flush(db, null);
        TestKeys.assertTablesUse(db, null, "cuckoofilter");
        for (int i = 0; i < KEYS; ++i) {
          assertNotNull(db.get(present(i)));
          assertNull(db.get(absent(i)));
        }
      }
      // Kafka closes the DB, then calls close, then closes its own objects.
      setter.close("store-1", options);
    }
  }

  @Test
  public void flinkOptionsFactory() throws Exception {
    // Flink ships the factory to its task managers: it must serialize.
    final RocksDBOptionsFactory factory = roundTrip(new CuckooOptionsFactory());

    final Deque<AutoCloseable> handlesToClose = new ArrayDeque<>();
    final List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions currentDb = new DBOptions();
         ColumnFamilyOptions currentColumns = new ColumnFamilyOptions();
         LRUCache sharedCache = new LRUCache(64 << 20)) {
      final DBOptions dbOptions = factory.createDBOptions(currentDb, handlesToClose)
          .setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
      final ColumnFamilyOptions columns =
          factory.createColumnOptions(currentColumns, handlesToClose);
      assertEquals(1, handlesToClose.size());
      // With managed memory, Flink's RocksDBResourceContainer sets its shared
      // block cache on the factory's table config and applies it again,
      // after the factory: the filter must still be open then.
      final BlockBasedTableConfig table = (BlockBasedTableConfig) columns.tableFormatConfig();
      columns.setTableFormatConfig(table.setBlockCache(sharedCache)
          .setCacheIndexAndFilterBlocks(true));
      assertEquals("cuckoofilter:10", CuckooFilter.filterPolicyIdOf(columns));

      try (RocksDB db = RocksDB.open(dbOptions, folder.newFolder("flink").getAbsolutePath(),
               Arrays.asList(
                   new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columns),
                   new ColumnFamilyDescriptor("state-1".getBytes(), columns)),
               handles)) {
        final ColumnFamilyHandle state = handles.get(1);
        for (int i = 0; i < KEYS; ++i) {
          db.put(state, present(i), TestKeys.value(i));
        }
        TestKeys.flush(db, state);
        TestKeys.assertTablesUse(db, state, "cuckoofilter");
        for (int i = 0; i < KEYS; ++i) {
          assertNotNull(db.get(state, present(i)));
          assertNull(db.get(state, absent(i)));
        }
        for (final ColumnFamilyHandle handle : handles) {
          handle.close();
        }
      }
    } finally {
      // As Flink: after the DB, in reverse order of creation.
      while (!handlesToClose.isEmpty()) {
        handlesToClose.removeLast().close();
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> T roundTrip(final T object) throws Exception {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(object);
    }
    try (ObjectInputStream in =
             new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (T) in.readObject();
    }
  }
}
