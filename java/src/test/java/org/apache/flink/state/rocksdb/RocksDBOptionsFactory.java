// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package org.apache.flink.state.rocksdb;

import java.util.Collection;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.WriteOptions;

/**
 * TEST ONLY: the shape of Flink 2.x's interface of this name (package
 * org.apache.flink.state.rocksdb since FLINK-4602/FLIP-349; Flink 1.x had it
 * in org.apache.flink.contrib.streaming.state, with the same two abstract
 * methods). Flink's has @PublicEvolving and a further default method,
 * createNativeMetricsOptions(RocksDBNativeMetricOptions), left out here
 * because its parameter type is Flink's.
 */
public interface RocksDBOptionsFactory extends java.io.Serializable {
  DBOptions createDBOptions(DBOptions currentOptions, Collection<AutoCloseable> handlesToClose);

  ColumnFamilyOptions createColumnOptions(
      ColumnFamilyOptions currentOptions, Collection<AutoCloseable> handlesToClose);

  default WriteOptions createWriteOptions(
      WriteOptions currentOptions, Collection<AutoCloseable> handlesToClose) {
    return currentOptions;
  }

  default ReadOptions createReadOptions(
      ReadOptions currentOptions, Collection<AutoCloseable> handlesToClose) {
    return currentOptions;
  }
}
