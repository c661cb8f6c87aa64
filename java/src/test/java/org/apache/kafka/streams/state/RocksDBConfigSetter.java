// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package org.apache.kafka.streams.state;

import java.util.Map;
import org.rocksdb.Options;

/**
 * TEST ONLY: the shape of Kafka Streams' interface of this name (kafka-streams
 * 3.x/4.x), written here so that the README's config setter compiles and runs
 * without Kafka. Kafka's own has a default {@code close} that logs a warning
 * (and a LOG field); implementations override it either way.
 */
public interface RocksDBConfigSetter {
  void setConfig(String storeName, Options options, Map<String, Object> configs);

  void close(String storeName, Options options);
}
