// core/cancel.h: a call runs until a cancel or its commit point, whichever comes first; the token
// is the thread's while a scope lives.
#include <catch2/catch.hpp>

#include "core/cancel.h"

using namespace ct;

TEST_CASE("cancel: whichever comes first of a cancel and the commit point wins (issue 50)", "[core][cancel]") {
  CancelToken cancelled_first;
  CHECK(cancelled_first.request_cancel());
  CHECK(cancelled_first.request_cancel());  // asking twice is asking once
  CHECK_FALSE(cancelled_first.begin_commit());
  CHECK(cancelled_first.state() == CancelToken::State::CancelRequested);
  CHECK(cancelled_first.cancel_requested());

  CancelToken committed_first;
  CHECK(committed_first.begin_commit());
  CHECK(committed_first.begin_commit());  // a nested call passes the same point again
  CHECK_FALSE(committed_first.request_cancel());
  CHECK(committed_first.state() == CancelToken::State::Committing);
  CHECK_FALSE(committed_first.cancel_requested());
}

TEST_CASE("cancel: the token is the thread's while its scope lives", "[core][cancel]") {
  CHECK_FALSE(cancel_requested());
  CHECK(begin_commit());  // outside any scope nothing can cancel a call
  CancelFlag outer = make_cancel_flag();
  {
    CancelScope scope(outer);
    CHECK_FALSE(cancel_requested());
    CancelFlag inner = make_cancel_flag();
    CHECK(inner->request_cancel());
    {
      CancelScope nested(inner);
      CHECK(cancel_requested());
      CHECK_FALSE(begin_commit());
    }
    CHECK_FALSE(cancel_requested());  // the outer token again
    CHECK(begin_commit());
    CHECK(outer->state() == CancelToken::State::Committing);
    CHECK_FALSE(outer->request_cancel());
  }
  CHECK_FALSE(cancel_requested());
}
