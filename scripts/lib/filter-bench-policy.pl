#!/usr/bin/perl
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The project's change to a copy of RocksDB's util/filter_bench.cc (7.8 to
# 11.x), edited in place: a -filter_policy flag whose string creates the
# policy through FilterPolicy::CreateFromString with strict ConfigOptions,
# so that a plugin's policy (preloaded) is benchmarked as RocksDB's own are.
# Where the builder is held as a BuiltinFilterBitsBuilder (before 8.x), it is
# held as a FilterBitsBuilder instead, and the predicted FP rate, which only
# the built-in builders give there, is left out. Each edit must apply.
#
# usage: perl scripts/lib/filter-bench-policy.pl FILTER_BENCH_CC
use strict;
use warnings;

my $file = shift or die "usage: filter-bench-policy.pl FILTER_BENCH_CC\n";
open(my $in, '<', $file) or die "$file: $!\n";
my $text = do { local $/; <$in> };
close($in);

sub edit {
  my ($what, $pattern, $replacement) = @_;
  $text =~ s/$pattern/$replacement->()/e
    or die "filter-bench-policy.pl: cannot $what in $file\n";
}

edit('add the include', qr/(#include "rocksdb\/cache.h"\n)/,
  sub { "$1#include \"rocksdb/convenience.h\"\n" });
edit('add the flag', qr/(DEFINE_bool\(net_includes_hashing)/, sub {
  "DEFINE_string(filter_policy, \"\",\n"
    . "              \"A filter policy string (FilterPolicy::CreateFromString), \"\n"
    . "              \"such as cuckoofilter:10, instead of -impl\");\n\n$1"
});
edit('create the policy from the string',
  qr/(const std::shared_ptr<const FilterPolicy> ?& ?GetPolicy\(\) \{\n  static std::shared_ptr<const FilterPolicy> policy;\n)/,
  sub {
    "$1  if (!policy && !FLAGS_filter_policy.empty()) {\n"
      . "    ROCKSDB_NAMESPACE::ConfigOptions config_options;\n"
      . "    config_options.ignore_unknown_options = false;\n"
      . "    config_options.ignore_unsupported_options = false;\n"
      . "    ROCKSDB_NAMESPACE::Status s = FilterPolicy::CreateFromString(\n"
      . "        config_options, FLAGS_filter_policy, &policy);\n"
      . "    if (!s.ok() || !policy) {\n"
      . "      fprintf(stderr, \"-filter_policy=%s: %s\\n\",\n"
      . "              FLAGS_filter_policy.c_str(), s.ToString().c_str());\n"
      . "      exit(1);\n"
      . "    }\n"
      . "    fprintf(stdout, \"Filter policy: %s\\n\", policy->Name());\n"
      . "  }\n";
  });
if ($text =~ /std::unique_ptr<BuiltinFilterBitsBuilder> builder;/) {
  edit('hold the builder as a FilterBitsBuilder',
    qr/std::unique_ptr<BuiltinFilterBitsBuilder> builder;/,
    sub { 'std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder;' });
  edit('take the builder unchecked',
    qr/static_cast_with_check<BuiltinFilterBitsBuilder>\(GetBuilder\(\)\)/,
    sub { 'GetBuilder()' });
  edit('leave out the predicted FP rate', qr/\n#define PREDICT_FP_RATE\n/,
    sub { "\n" });
}

open(my $out, '>', $file) or die "$file: $!\n";
print $out $text;
close($out);
