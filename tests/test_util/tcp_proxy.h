// A loopback TCP proxy that tests can cut and heal: a network partition between one agent and
// the master without network namespaces. Runs on its own thread.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "common/rpc/asio.h"

namespace snn::testing {

class TcpProxy {
 public:
  explicit TcpProxy(uint16_t target_port)
      : target_(asio::ip::make_address("127.0.0.1"), target_port),
        acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TcpProxy() {
    asio::post(io_, [this] {
      acceptor_.close();
      CloseAll();
    });
    io_.stop();
    thread_.join();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  // Drops every connection and refuses new ones until Heal().
  void Cut() {
    cut_ = true;
    asio::post(io_, [this] { CloseAll(); });
  }
  void Heal() { cut_ = false; }

 private:
  struct Pair {
    explicit Pair(asio::io_context& io) : a(io), b(io) {}
    tcp::socket a, b;
    std::array<char, 16384> ab{}, ba{};
  };

  void Accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
      if (ec) return;
      if (!cut_) {
        auto pair = std::make_shared<Pair>(io_);
        pair->a = std::move(s);
        boost::system::error_code cec;
        pair->b.connect(target_, cec);
        if (!cec) {
          pairs_.insert(pair);
          Pump(pair, pair->a, pair->b, pair->ab);
          Pump(pair, pair->b, pair->a, pair->ba);
        }
      }
      Accept();
    });
  }

  void Pump(std::shared_ptr<Pair> pair, tcp::socket& from, tcp::socket& to,
            std::array<char, 16384>& buf) {
    from.async_read_some(asio::buffer(buf), [this, pair, &from, &to, &buf](
                                                const boost::system::error_code& ec, size_t n) {
      if (ec) return Drop(pair);
      asio::async_write(
          to, asio::buffer(buf.data(), n),
          [this, pair, &from, &to, &buf](const boost::system::error_code& wec, size_t) {
            if (wec) return Drop(pair);
            Pump(pair, from, to, buf);
          });
    });
  }

  void Drop(const std::shared_ptr<Pair>& pair) {
    boost::system::error_code ignored;
    pair->a.close(ignored);
    pair->b.close(ignored);
    pairs_.erase(pair);
  }

  void CloseAll() {
    auto all = pairs_;
    for (const auto& p : all) Drop(p);
  }

  tcp::endpoint target_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::set<std::shared_ptr<Pair>> pairs_;  // only on the proxy's thread
  std::atomic<bool> cut_{false};
  std::thread thread_;
};

}  // namespace snn::testing
