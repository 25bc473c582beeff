//! The wire form of each finished message, kept from one request to the next, so a request
//! body at 10,000 messages costs a copy of their bytes instead of serializing them all again.
//!
//! A kept entry holds the message it was made from. It is used only while the message at its
//! index is the very same message, compared field by field with [`same_message`], which is
//! stricter than `==` wherever `==` would let two messages that serialize differently pass
//! (`0.0` and `-0.0`, a map's key order). The comparison reads every byte of the history, at
//! the speed of `memcmp`, which is a small part of escaping it all into JSON. A message that
//! changed in any way is serialized again: a stale body cannot be sent.

use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use crate::types::{ContentBlock, Message, ToolInput, ToolUse};

/// Caches kept by a [`CachePool`]: one per conversation a provider serves at a time (parallel
/// workflow phases share their provider), beyond which the least recently used goes.
const POOL_SIZE: usize = 8;

/// The caches of the conversations a provider serves, so that parallel conversations do not
/// take turns overwriting one cache (each request would serialize its whole history again),
/// nor wait for each other: a cache is taken out of the pool while a body is built with it.
pub(crate) struct CachePool<C> {
    /// Least recently used first.
    caches: Mutex<Vec<C>>,
}

impl<C> Default for CachePool<C> {
    fn default() -> Self {
        Self {
            caches: Mutex::new(Vec::new()),
        }
    }
}

/// How a cache relates to a request, for [`CachePool::with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// It was made for this conversation (its first message is the request's).
    Mine,
    /// It holds nothing that says which conversation it was made for.
    Unclaimed,
    /// It belongs to another conversation.
    Other,
}

impl<C: Default> CachePool<C> {
    /// Runs `f` with the most recently used cache that `claim` calls [`Claim::Mine`], else one
    /// [`Claim::Unclaimed`], else a new one, and keeps it afterwards.
    pub(crate) fn with<R>(&self, claim: impl Fn(&C) -> Claim, f: impl FnOnce(&mut C) -> R) -> R {
        let mut cache = {
            // A cache checks every entry against its message before use, so the pool left by
            // a panicking thread is as good as any.
            let mut caches = self.caches.lock().unwrap_or_else(PoisonError::into_inner);
            let position = [Claim::Mine, Claim::Unclaimed]
                .into_iter()
                .find_map(|wanted| caches.iter().rposition(|c| claim(c) == wanted));
            position.map_or_else(C::default, |i| caches.remove(i))
        };
        let result = f(&mut cache);
        let mut caches = self.caches.lock().unwrap_or_else(PoisonError::into_inner);
        caches.push(cache);
        if caches.len() > POOL_SIZE {
            caches.remove(0);
        }
        result
    }
}

/// One message's wire form, and the message it was made from.
struct Entry<W> {
    message: Message,
    wire: W,
}

/// Wire forms by message index (the position in [`Request::messages`](crate::Request)).
pub(crate) struct WireCache<W> {
    entries: Vec<Option<Entry<W>>>,
}

impl<W> Default for WireCache<W> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<W> WireCache<W> {
    /// Whether this cache was made for a conversation that starts with `first` (`None` when
    /// it holds no first message to tell).
    pub(crate) fn starts_with(&self, first: Option<&Message>) -> Option<bool> {
        let kept = self.entries.first()?.as_ref()?;
        Some(first.is_some_and(|first| same_message(&kept.message, first)))
    }

    /// The wire form of every message of `messages` for which `keep` holds (`None` for the
    /// others): the kept one where it was made from that very message, else a new one made
    /// with `make` and kept. Entries past the end of `messages` are dropped.
    pub(crate) fn refresh<E>(
        &mut self,
        messages: &[Message],
        keep: impl Fn(usize) -> bool,
        make: impl Fn(&Message) -> Result<W, E>,
    ) -> Result<Vec<Option<&W>>, E> {
        self.entries.truncate(messages.len());
        self.entries.resize_with(messages.len(), || None);
        for (index, (message, slot)) in messages.iter().zip(&mut self.entries).enumerate() {
            if !keep(index) {
                continue;
            }
            if slot
                .as_ref()
                .is_some_and(|entry| same_message(&entry.message, message))
            {
                continue;
            }
            *slot = Some(Entry {
                wire: make(message)?,
                message: message.clone(),
            });
        }
        Ok(self
            .entries
            .iter()
            .enumerate()
            .map(|(index, slot)| {
                slot.as_ref()
                    .filter(|_| keep(index))
                    .map(|entry| &entry.wire)
            })
            .collect())
    }
}

/// Whether `a` and `b` are the same message, down to what their JSON would show.
pub(crate) fn same_message(a: &Message, b: &Message) -> bool {
    a.role == b.role
        && a.content.len() == b.content.len()
        && a.content
            .iter()
            .zip(&b.content)
            .all(|(x, y)| same_block(x, y))
}

fn same_block(a: &ContentBlock, b: &ContentBlock) -> bool {
    // Every field is named, so a field added later cannot be left out of the comparison.
    match (a, b) {
        (ContentBlock::Text { text: x }, ContentBlock::Text { text: y }) => x == y,
        (
            ContentBlock::ToolUse(ToolUse {
                id: id_a,
                name: name_a,
                input: input_a,
            }),
            ContentBlock::ToolUse(ToolUse {
                id: id_b,
                name: name_b,
                input: input_b,
            }),
        ) => id_a == id_b && name_a == name_b && same_input(input_a, input_b),
        (
            ContentBlock::ToolResult {
                tool_use_id: id_a,
                text: text_a,
                is_error: error_a,
            },
            ContentBlock::ToolResult {
                tool_use_id: id_b,
                text: text_b,
                is_error: error_b,
            },
        ) => id_a == id_b && text_a == text_b && error_a == error_b,
        _ => false,
    }
}

fn same_input(a: &ToolInput, b: &ToolInput) -> bool {
    match (a, b) {
        (ToolInput::Valid(x), ToolInput::Valid(y)) => same_value(x, y),
        (
            ToolInput::Invalid {
                raw: raw_a,
                error: error_a,
            },
            ToolInput::Invalid {
                raw: raw_b,
                error: error_b,
            },
        ) => raw_a == raw_b && error_a == error_b,
        _ => false,
    }
}

/// Whether `a` and `b` serialize to the same JSON text: numbers by their exact bits (`==`
/// takes `0.0` for `-0.0`), objects key by key in their order (`==` ignores the order when
/// `serde_json` keeps insertion order).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => {
            x == y && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
        }
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((key_a, p), (key_b, q))| key_a == key_b && same_value(p, q))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::Role;

    fn call(input: Value) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse(ToolUse {
                id: "t1".into(),
                name: "File_read".into(),
                input: ToolInput::Valid(input),
            })],
        }
    }

    #[test]
    fn messages_that_serialize_differently_are_never_the_same() {
        // `==` calls these equal; their JSON differs.
        let (zero, minus_zero) = (call(json!({"x": 0.0})), call(json!({"x": -0.0})));
        assert_eq!(zero, minus_zero);
        assert_ne!(
            serde_json::to_string(&zero).unwrap(),
            serde_json::to_string(&minus_zero).unwrap()
        );
        assert!(!same_message(&zero, &minus_zero));
        // An integer and the float of the same value.
        assert!(!same_message(
            &call(json!({"x": 1})),
            &call(json!({"x": 1.0}))
        ));
        let pairs = [
            (Message::user_text("a"), Message::user_text("b")),
            (Message::user_text("a"), Message::assistant_text("a")),
            (
                Message::user_text("a"),
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::Text { text: "a".into() },
                        ContentBlock::Text {
                            text: String::new(),
                        },
                    ],
                },
            ),
            (
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: "t1".into(),
                        text: "ok".into(),
                        is_error: false,
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: "t1".into(),
                        text: "ok".into(),
                        is_error: true,
                    }],
                },
            ),
            (call(json!({"a": [1, 2]})), call(json!({"a": [1, 2, 3]}))),
            (
                call(json!({"a": {"b": "c"}})),
                call(json!({"a": {"b": "d"}})),
            ),
            (call(json!({"a": null})), call(json!({"a": false}))),
            (
                call(json!({})),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::ToolUse(ToolUse {
                        id: "t1".into(),
                        name: "File_read".into(),
                        input: ToolInput::parse("{oops"),
                    })],
                },
            ),
        ];
        for (a, b) in &pairs {
            assert!(!same_message(a, b), "{a:?} / {b:?}");
            assert!(same_message(a, &a.clone()));
        }
    }

    /// A stand-in cache: the conversation it was made for, if any, and its number.
    #[derive(Default)]
    struct Fake {
        of: Option<&'static str>,
        number: usize,
    }

    fn claim(conversation: &'static str) -> impl Fn(&Fake) -> Claim {
        move |cache: &Fake| match cache.of {
            Some(of) if of == conversation => Claim::Mine,
            Some(_) => Claim::Other,
            None => Claim::Unclaimed,
        }
    }

    #[test]
    fn a_pool_gives_each_conversation_its_own_cache() {
        let pool: CachePool<Fake> = CachePool::default();
        let made = std::cell::Cell::new(0);
        let serve = |conversation: &'static str| {
            pool.with(claim(conversation), |cache| {
                if cache.of.is_none() {
                    made.set(made.get() + 1);
                    *cache = Fake {
                        of: Some(conversation),
                        number: made.get(),
                    };
                }
                cache.number
            })
        };
        // Two conversations taking turns keep their caches.
        let (a, b) = (serve("a"), serve("b"));
        assert_ne!(a, b);
        for _ in 0..3 {
            assert_eq!(serve("a"), a);
            assert_eq!(serve("b"), b);
        }
        // Past the pool's size the least recently used goes: "a" was used before "b".
        for i in 0..POOL_SIZE - 1 {
            let name: &'static str = Box::leak(format!("c{i}").into_boxed_str());
            serve(name);
        }
        assert_eq!(serve("b"), b);
        assert_ne!(serve("a"), a, "a was dropped");
        // An unclaimed cache is taken before a new one is made.
        let before = made.get();
        pool.with(claim("x"), |cache| cache.of = None);
        assert_eq!(made.get(), before);
        serve("y");
        assert_eq!(made.get(), before + 1);
        assert_eq!(pool.caches.lock().unwrap().len(), POOL_SIZE);
    }

    #[test]
    fn a_cache_in_use_is_not_given_to_another_request() {
        let pool: CachePool<Fake> = CachePool::default();
        pool.with(claim("a"), |cache| cache.of = Some("a"));
        pool.with(claim("a"), |outer| {
            assert_eq!(outer.of, Some("a"));
            pool.with(claim("a"), |inner| assert_eq!(inner.of, None, "a new one"));
        });
    }

    #[test]
    fn an_entry_is_made_again_when_its_message_changed() {
        let mut cache: WireCache<String> = WireCache::default();
        let serialized = std::cell::Cell::new(0);
        let make = |m: &Message| {
            serialized.set(serialized.get() + 1);
            serde_json::to_string(m)
        };
        let mut messages = vec![Message::user_text("a"), Message::assistant_text("b")];
        cache.refresh(&messages, |_| true, make).unwrap();
        assert_eq!(serialized.get(), 2);
        cache.refresh(&messages, |_| true, make).unwrap();
        assert_eq!(serialized.get(), 2, "nothing changed, nothing made");
        Message::push_user_text(&mut messages, "c");
        messages[0] = Message::user_text("A");
        let wires = cache.refresh(&messages, |_| true, make).unwrap();
        let expected: Vec<String> = messages
            .iter()
            .map(|m| serde_json::to_string(m).unwrap())
            .collect();
        assert_eq!(wires, expected.iter().map(Some).collect::<Vec<_>>());
        assert_eq!(serialized.get(), 4);
        // Nothing where `keep` says no; nothing past the end.
        messages.truncate(1);
        let wires = cache.refresh(&messages, |_| false, make).unwrap();
        assert_eq!(wires, vec![None]);
        assert_eq!(serialized.get(), 4);
    }
}
