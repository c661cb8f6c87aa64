// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo.examples;

import io.github.rocksdbcuckoo.CuckooFilter;
import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;

/** The README's Kafka Streams config setter, verbatim (ReadmeSnippetsTest checks). */
public class CuckooConfigSetter implements RocksDBConfigSetter {
  private CuckooFilter filter;

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    filter = new CuckooFilter(10);
    options.setTableFormatConfig(table.setFilterPolicy(filter));
  }

  @Override
  public void close(String storeName, Options options) { filter.close(); }
}
