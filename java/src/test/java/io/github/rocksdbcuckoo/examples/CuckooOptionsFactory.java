// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo.examples;

import io.github.rocksdbcuckoo.CuckooFilter;
import java.util.Collection;
import org.apache.flink.state.rocksdb.RocksDBOptionsFactory;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;

/** The README's Flink options factory, verbatim (ReadmeSnippetsTest checks). */
@SuppressWarnings("serial")
public class CuckooOptionsFactory implements RocksDBOptionsFactory {
  @Override
  public DBOptions createDBOptions(DBOptions current, Collection<AutoCloseable> handlesToClose) {
    return current;
  }

  @Override
  public ColumnFamilyOptions createColumnOptions(
      ColumnFamilyOptions current, Collection<AutoCloseable> handlesToClose) {
    BlockBasedTableConfig table = current.tableFormatConfig() instanceof BlockBasedTableConfig
        ? (BlockBasedTableConfig) current.tableFormatConfig() : new BlockBasedTableConfig();
    CuckooFilter filter = new CuckooFilter(10);
    handlesToClose.add(filter);
    return current.setTableFormatConfig(table.setFilterPolicy(filter));
  }
}
