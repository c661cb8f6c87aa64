// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
package io.github.rocksdbcuckoo;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/**
 * The README's Java snippets are the example classes that the tests compile
 * and run (examples/), verbatim: a snippet edited in one place only fails
 * here.
 */
public class ReadmeSnippetsTest {
  @Test
  public void everyJavaSnippetIsAnExampleClass() throws Exception {
    final Path readme = Paths.get(System.getProperty("cuckoo.test.readme"));
    final Path examples = Paths.get(System.getProperty("cuckoo.test.examples"));
    final String text = new String(Files.readAllBytes(readme), StandardCharsets.UTF_8);
    final Matcher block = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(text);
    int snippets = 0;
    while (block.find()) {
      final Matcher name = Pattern.compile("public class (\\w+)").matcher(block.group(1));
      assertTrue("a README Java snippet without a public class", name.find());
      final Path example = examples.resolve(name.group(1) + ".java");
      final String source = new String(Files.readAllBytes(example), StandardCharsets.UTF_8);
      assertTrue(example + " is not the README's snippet", source.endsWith(block.group(1)));
      ++snippets;
    }
    assertEquals("the README's Kafka Streams and Flink snippets", 2, snippets);
  }
}
