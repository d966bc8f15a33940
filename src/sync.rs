//! Locks taken as they are left. What a lock guards here (a run's findings and known values,
//! a cache, a rate limit's next slot, a registry token) stays whole when a thread panics while
//! holding it: every write under these locks is one assignment or one push. So a poisoned lock
//! is read through rather than ending the run and losing what the other threads found.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

pub fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// The value a finished lock held.
pub fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_still_gives_what_it_holds() {
        let m = Mutex::new(vec![1]);
        let l = RwLock::new(2);
        std::thread::scope(|s| {
            let _ = s
                .spawn(|| {
                    let _held = (m.lock().unwrap(), l.write().unwrap());
                    panic!("poison both");
                })
                .join();
        });
        assert!(m.is_poisoned() && l.is_poisoned());
        lock(&m).push(3);
        *write(&l) += 1;
        assert_eq!(*read(&l), 3);
        assert_eq!(into_inner(m), vec![1, 3]);
    }
}
