// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// A minimal blocking Redis client for the example's shared gate: one TCP
// connection to a server on 127.0.0.1, commands sent as RESP arrays of bulk
// strings, and the replies the CF commands give (simple strings, errors,
// integers, bulk strings and arrays of integers) read back. Enough for
// CF.RESERVE, CF.INSERT, CF.ADD, CF.DEL, CF.EXISTS and MEMORY USAGE; a
// real service would use a client library.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace catalogue {

class RespClient {
 public:
  struct Reply {
    char type = 0;                    // '+', '-', ':', '$' or '*'
    long long integer = 0;            // ':'
    std::string text;                 // '+', '-', '$'
    std::vector<long long> integers;  // '*' of integers
  };

  explicit RespClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address),
                  sizeof(address)) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot connect to 127.0.0.1:" +
                               std::to_string(port));
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~RespClient() { ::close(fd_); }
  RespClient(const RespClient&) = delete;
  RespClient& operator=(const RespClient&) = delete;

  // Sends the command and returns its reply; an error reply throws.
  Reply Command(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& arg : args) {
      out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
    }
    for (size_t sent = 0; sent < out.size();) {
      const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, 0);
      if (n <= 0) throw std::runtime_error("the server closed the connection");
      sent += static_cast<size_t>(n);
    }
    Reply reply = Read();
    if (reply.type == '-') {
      throw std::runtime_error(args[0] + ": " + reply.text);
    }
    return reply;
  }

 private:
  Reply Read() {
    Reply reply;
    const std::string line = Line();
    reply.type = line.empty() ? 0 : line[0];
    const std::string rest = line.substr(1);
    switch (reply.type) {
      case '+':
      case '-':
        reply.text = rest;
        break;
      case ':':
        reply.integer = std::strtoll(rest.c_str(), nullptr, 10);
        break;
      case '$': {
        const long long size = std::strtoll(rest.c_str(), nullptr, 10);
        if (size >= 0) {
          reply.text = Bytes(static_cast<size_t>(size) + 2);
          reply.text.resize(static_cast<size_t>(size));
        }
        break;
      }
      case '*': {
        const long long count = std::strtoll(rest.c_str(), nullptr, 10);
        for (long long i = 0; i < count; ++i) {
          const Reply element = Read();
          if (element.type != ':') {
            throw std::runtime_error("an array of other than integers");
          }
          reply.integers.push_back(element.integer);
        }
        break;
      }
      default:
        throw std::runtime_error("an unexpected reply: " + line);
    }
    return reply;
  }

  // The next line, without its "\r\n".
  std::string Line() {
    std::string line;
    for (;;) {
      const size_t end = buffer_.find("\r\n", start_);
      if (end != std::string::npos) {
        line = buffer_.substr(start_, end - start_);
        start_ = end + 2;
        return line;
      }
      Fill();
    }
  }

  std::string Bytes(size_t size) {
    while (buffer_.size() - start_ < size) Fill();
    std::string bytes = buffer_.substr(start_, size);
    start_ += size;
    return bytes;
  }

  void Fill() {
    buffer_.erase(0, start_);
    start_ = 0;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) throw std::runtime_error("the server closed the connection");
    buffer_.append(chunk, static_cast<size_t>(n));
  }

  int fd_;
  std::string buffer_;
  size_t start_ = 0;
};

}  // namespace catalogue
